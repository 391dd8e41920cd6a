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
    s : float or ndarray of shape (n,)
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
    s : float or ndarray of shape (n,)
        noise + alpha, the diagonal added (alpha per sample: known noise).
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
    if np.ndim(s) == 0:
        grad[0] = 0.5 * (float(y @ alpha) - s * aa - n + s * np.sum(kappa))  # ∂K = c K̃ = K − s I
    else:
        grad[0] = 0.5 * (float(y @ alpha) - float(s @ alpha ** 2) - n + float(s @ kappa))
    grad[1] = 0.5 * noise * (aa - np.sum(kappa))                              # ∂K = noise I
    if p:
        # ∂K = c ∂K̃, ∂K̃ = U Wᵀ + W Uᵀ (+ for FITC diag(∂kd − 2 rowdot(U, W))), U = ∂A − ½ W ∂K_ZZ:
        # αᵀ∂K̃α − tr(K⁻¹∂K̃) = 2 Σ S ⊙ U + Σ (α² − κ) ∂kd, S = α (Wᵀα)ᵀ − K⁻¹W − diag(α² − κ) W,
        # and Σ S ⊙ U = Σ S ⊙ ∂A − ½ Σ (Wᵀ S) ⊙ ∂K_ZZ: O(n·m) per hyperparameter.
        W = T.W
        YW = kinv(W)
        S = np.outer(alpha, W.T @ alpha) - YW
        if fitc:
            S -= (alpha ** 2 - kappa)[:, None] * W
        q = 2.0 * (S.reshape(-1) @ T.GA.reshape(n * m, p)) - (W.T @ S).reshape(-1) @ T.Gzz.reshape(m * m, p)
        if fitc:
            q += (alpha ** 2 - kappa) @ T.gkd
        grad[2:] = 0.5 * c * q
    if eval_information:
        return lml, grad, fisher_information(T, c, noise, fitc, kinv, np.sqrt(c) * V.T, lam, YW if p else None)
    return lml, grad


def fisher_information(T, c, noise, fitc, kinv, Q, lam, YW):
    """F_ij = ½ tr(K⁻¹ ∂_i K K⁻¹ ∂_j K) of (log c, log noise, the kernel's theta), from n×m products.

    Each ∂_i K is a low-rank part L_i plus a diagonal diag(e_i):
    L = c P Pᵀ and e = c D for log c, L = 0 and e = noise for log noise,
    L = c (U_t Wᵀ + W U_tᵀ) and e = c (∂kd_t − 2 rowdot(U_t, W)) for the
    kernel's t-th hyperparameter (the diagonals with FITC only, but the
    noise's). With Y = K⁻¹ X for X = P, W, U_t, the m×m matrices
    G_XX' = Xᵀ K⁻¹ X' and K⁻¹ = Λ⁻¹ − Q Qᵀ,

        tr(K⁻¹ L_c K⁻¹ L_c) = c² Σ G_PP ⊙ G_PP,
        tr(K⁻¹ L_c K⁻¹ L_t) = 2 c² Σ G_PU_t ⊙ G_PW,
        tr(K⁻¹ L_s K⁻¹ L_t) = 2 c² (Σ G_WU_t ⊙ G_WU_sᵀ + Σ U_s ⊙ (Y_U_t G_WW)),
        tr(K⁻¹ L_i K⁻¹ diag(e)) = e · r_i, r_c = c rowdot(Y_P, Y_P), r_t = 2 c rowdot(Y_U_t, Y_W),
        tr(K⁻¹ diag(e) K⁻¹ diag(e')) = Σ_k e_k e'_k (1/λ_k² − 2‖Q_k‖²/λ_k) + Σ (Qᵀ diag(e) Q) ⊙ (Qᵀ diag(e') Q)

    (the last term of the third line is ⟨G_WW, G_U_sU_t⟩ without the p² blocks
    G_U_sU_t). O(p n m²) arithmetic, O(p n m) memory. ``YW`` is K⁻¹ W, which the
    gradient computed already (None without the kernel's hyperparameters).
    """
    P, W = T.P, T.W
    n, m = P.shape
    p = 0 if T.GA is None else T.GA.shape[2]
    k = 2 + p
    YP = kinv(P)
    Gpp = P.T @ YP
    low = np.zeros((k, k))                  # tr(K⁻¹ L_i K⁻¹ L_j)
    low[0, 0] = c * c * np.sum(Gpp * Gpp)
    r = [c * np.einsum("ij,ij->i", YP, YP), None]
    diags = [c * (T.kd - np.einsum("ij,ij->i", P, P)) if fitc else None, np.full(n, noise)]
    if p:
        U = np.stack([T.U(t) for t in range(p)], axis=2)                            # (n, m, p)
        YU = kinv(U.reshape(n, m * p)).reshape(n, m, p)
        Gww = W.T @ YW
        Gww = 0.5 * (Gww + Gww.T)
        Gpw = P.T @ YW
        B = np.einsum("ia,ibt->abt", W, YU, optimize=True)                       # G_WU_t
        C = np.einsum("ia,ibt->abt", P, YU, optimize=True)                       # G_PU_t
        Z = np.einsum("iat,ab->ibt", YU, Gww, optimize=True)                      # Y_U_t G_WW
        low[0, 2:] = low[2:, 0] = 2 * c * c * np.einsum("abt,ab->t", C, Gpw)
        uu = np.einsum("abt,bas->ts", B, B) + np.einsum("ias,iat->st", U, Z, optimize=True)
        low[2:, 2:] = c * c * (uu + uu.T)   # 2 c² (…), symmetrized
        for t in range(p):
            r.append(2 * c * np.einsum("ij,ij->i", YU[:, :, t], YW))
            diags.append(c * (T.gkd[:, t] - 2.0 * np.einsum("ij,ij->i", U[:, :, t], W)) if fitc else None)
    base = 1.0 / lam ** 2 - 2.0 * np.einsum("ij,ij->i", Q, Q) / lam
    H = [None if e is None else Q.T @ (e[:, None] * Q) for e in diags]
    F = low.copy()
    for i in range(k):
        for j in range(i, k):
            v = 0.0
            if diags[j] is not None and r[i] is not None:
                v += float(diags[j] @ r[i])
            if diags[i] is not None and r[j] is not None:
                v += float(diags[i] @ r[j])
            if diags[i] is not None and diags[j] is not None:
                v += float(diags[i] @ (base * diags[j])) + np.sum(H[i] * H[j])
            F[i, j] += v
            if j != i:
                F[j, i] += v
    return 0.5 * F
