"""The linear algebra of the low-rank Gaussian process: K = c (P Pᵀ + D) + s I by the
Woodbury identity and the matrix determinant lemma, with n×m products only.

Both functions take the :class:`~graphgram.gaussian_process._low_rank.LowRankTerms`
of the training graphs.
"""

import numpy as np
import scipy.linalg

__all__ = ["factor", "fisher_information", "log_marginal_likelihood"]


def factor(T, c, s, fitc):
    """The Woodbury pieces of K = c (P Pᵀ + D) + s I, D = diag(k(x, x) − ‖P_x‖²) with FITC.

    Parameters
    ----------
    T : LowRankTerms
        ``P``, and ``kd`` with FITC.
    c : float
        The signal variance.
    s : float
        The diagonal added (noise + alpha).
    fitc : bool

    Returns
    -------
    (lam, Pl, Lm) or None
        The diagonal Λ = c D + s I as a vector (n,), Λ⁻¹ P (n×m) and the lower
        Cholesky factor of M = I + c Pᵀ Λ⁻¹ P (m×m); None when K is not
        positive definite.
    """
    P = T.P
    lam = np.full(len(P), s)
    if fitc:
        lam += c * (T.kd - np.einsum("ij,ij->i", P, P))
    if not np.all(lam > 0):
        return None
    Pl = P / lam[:, None]
    M = c * (P.T @ Pl)
    M[np.diag_indices_from(M)] += 1.0
    try:
        Lm = scipy.linalg.cholesky(M, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    return lam, Pl, Lm


def log_marginal_likelihood(T, c, noise, s, fitc, y, eval_gradient, eval_information=False):
    """The log marginal likelihood of y under K = c K̃ + s I, in O(n·m²) with n×m products only.

    Parameters
    ----------
    T : LowRankTerms
        With the gradient terms when ``eval_gradient``.
    c, noise : float
        The signal and noise variances.
    s : float
        noise + alpha, the diagonal added.
    fitc : bool
    y : ndarray of shape (n,)
    eval_gradient : bool
    eval_information : bool, default=False
        Also return the Fisher information (with ``eval_gradient``).

    Returns
    -------
    lml : float
        -inf when K is not positive definite, as scikit-learn.
    grad : ndarray of shape (2 + n_dims,), with ``eval_gradient``
        With respect to (log c, log noise, the kernel's theta); zeros with -inf.
    fisher : ndarray of shape (2 + n_dims, 2 + n_dims) or None, with ``eval_information``
        ½ tr(K⁻¹ ∂_i K K⁻¹ ∂_j K) (:func:`fisher_information`); None with -inf.
    """
    n, m = T.P.shape
    p = 0 if T.GA is None else T.GA.shape[2]
    parts = factor(T, c, s, fitc)
    if parts is None:
        if eval_information:
            return -np.inf, np.zeros(2 + p), None
        return (-np.inf, np.zeros(2 + p)) if eval_gradient else -np.inf
    lam, Pl, Lm = parts
    P = T.P
    cho = (Lm, True)

    def kinv(Y):
        """K⁻¹ Y by Woodbury: Λ⁻¹ Y − c Λ⁻¹ P M⁻¹ Pᵀ Λ⁻¹ Y."""
        Yl = Y / (lam[:, None] if Y.ndim == 2 else lam)
        return Yl - c * (Pl @ scipy.linalg.cho_solve(cho, P.T @ Yl, check_finite=False))

    alpha = kinv(y)
    # log det K = Σ log Λ + log det M (the matrix determinant lemma).
    logdet = np.sum(np.log(lam)) + 2.0 * np.sum(np.log(np.diag(Lm)))
    lml = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * n * np.log(2 * np.pi)
    if not eval_gradient:
        return lml
    # ∂LML = ½ (αᵀ ∂K α − tr(K⁻¹ ∂K)); κ = diag(K⁻¹).
    V = scipy.linalg.solve_triangular(Lm, Pl.T, lower=True, check_finite=False)
    kappa = 1.0 / lam - c * np.einsum("ji,ji->i", V, V)
    aa = float(alpha @ alpha)
    grad = np.empty(2 + p)
    grad[0] = 0.5 * (float(y @ alpha) - s * aa - n + s * np.sum(kappa))      # ∂K = c K̃ = K − s I
    grad[1] = 0.5 * noise * (aa - np.sum(kappa))                              # ∂K = noise I
    if p:
        # ∂K = c ∂K̃, ∂K̃ = U Wᵀ + W Uᵀ (+ for FITC diag(∂kd − 2 rowdot(U, W))), U = ∂A − ½ W ∂K_ZZ:
        # αᵀ∂K̃α − tr(K⁻¹∂K̃) = 2 Σ S ⊙ U + Σ (α² − κ) ∂kd, S = α (Wᵀα)ᵀ − K⁻¹W − diag(α² − κ) W,
        # and Σ S ⊙ U = Σ S ⊙ ∂A − ½ Σ (Wᵀ S) ⊙ ∂K_ZZ: O(n·m) per hyperparameter.
        W = T.W
        S = np.outer(alpha, W.T @ alpha) - kinv(W)
        if fitc:
            S -= (alpha ** 2 - kappa)[:, None] * W
        q = 2.0 * (S.reshape(-1) @ T.GA.reshape(n * m, p)) - (W.T @ S).reshape(-1) @ T.Gzz.reshape(m * m, p)
        if fitc:
            q += (alpha ** 2 - kappa) @ T.gkd
        grad[2:] = 0.5 * c * q
    if eval_information:
        return lml, grad, fisher_information(T, c, noise, fitc, kinv, np.sqrt(c) * V.T, lam)
    return lml, grad


def fisher_information(T, c, noise, fitc, kinv, Q, lam):
    """F_ij = ½ tr(K⁻¹ ∂_i K K⁻¹ ∂_j K) of (log c, log noise, the kernel's theta), from n×m products.

    Each ∂_i K is a sum of products X_a X_bᵀ of n×m matrices from the set
    S = {P, W, U_1 … U_p} plus a diagonal: c P Pᵀ + c diag(D) for log c,
    noise · I for log noise, c (U_t Wᵀ + W U_tᵀ) + c diag(∂kd_t − 2 rowdot(U_t, W))
    for the kernel's t-th hyperparameter (the diagonals with FITC only, but
    the noise's). With G_ab = X_aᵀ K⁻¹ X_b (one (|S| m)² product), Y_a = K⁻¹ X_a
    and K⁻¹ = Λ⁻¹ − Q Qᵀ,

        tr(K⁻¹ X_a X_bᵀ K⁻¹ X_c X_dᵀ) = Σ G_bc ⊙ G_ad,
        tr(K⁻¹ X_a X_bᵀ K⁻¹ diag(e)) = Σ_k e_k (Y_a)_k · (Y_b)_k,
        tr(K⁻¹ diag(e) K⁻¹ diag(e')) = Σ_k e_k e'_k (1/λ_k² − 2‖Q_k‖²/λ_k) + Σ (Qᵀ diag(e) Q) ⊙ (Qᵀ diag(e') Q).

    O((p + 2)² n m²) arithmetic, O(p n m) memory.
    """
    P, W = T.P, T.W
    n, m = P.shape
    p = 0 if T.GA is None else T.GA.shape[2]
    S = [P] if p == 0 else [P, W] + [T.GA[:, :, t] - 0.5 * W @ T.Gzz[:, :, t] for t in range(p)]
    # terms[i]: (coefficient, a, b) of ∂_i K's low-rank part X_a X_bᵀ; diags[i]: its diagonal or None.
    terms = [[(c, 0, 0)], []] + [[(c, 2 + t, 1), (c, 1, 2 + t)] for t in range(p)]
    diags = [c * (T.kd - np.einsum("ij,ij->i", P, P)) if fitc else None, np.full(n, noise)]
    for t in range(p):
        diags.append(c * (T.gkd[:, t] - 2.0 * np.einsum("ij,ij->i", S[2 + t], W)) if fitc else None)
    Y = [kinv(X) for X in S]
    flat = np.hstack(S)
    G = flat.T @ np.hstack(Y)
    G = 0.5 * (G + G.T)                      # symmetric in exact arithmetic

    def g(a, b):
        return G[a * m:(a + 1) * m, b * m:(b + 1) * m]

    rowdot = {}
    for ts in terms:
        for _, a, b in ts:
            if (a, b) not in rowdot:
                rowdot[a, b] = np.einsum("ij,ij->i", Y[a], Y[b])
    base = 1.0 / lam ** 2 - 2.0 * np.einsum("ij,ij->i", Q, Q) / lam
    H = [None if e is None else Q.T @ (e[:, None] * Q) for e in diags]
    k = 2 + p
    F = np.zeros((k, k))
    for i in range(k):
        for j in range(i, k):
            v = 0.0
            for ci, a, b in terms[i]:
                for cj, cc, d in terms[j]:
                    v += ci * cj * np.sum(g(b, cc) * g(a, d))
                if diags[j] is not None:
                    v += ci * float(diags[j] @ rowdot[a, b])
            if diags[i] is not None:
                for cj, cc, d in terms[j]:
                    v += cj * float(diags[i] @ rowdot[cc, d])
                if diags[j] is not None:
                    v += float(diags[i] @ (base * diags[j])) + np.sum(H[i] * H[j])
            F[i, j] = F[j, i] = 0.5 * v
    return F
