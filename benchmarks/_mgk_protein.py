"""Seeded generator of protein-like 3D heavy-atom clouds for bench_mgk.py.

A protein's heavy atoms form one compact, roughly spherical globule: covalent
bonds of about 1.5 Å, bond angles near 110° (so atoms two bonds apart sit about
2.5 Å apart), no two non-bonded atoms much closer than about 3 Å, and a packing
of about one heavy atom per 17-18 Å³. (Proteins have a mass density of about
1.35 g/cm³ = 0.81 Da/Å³ and about 14 Da per heavy atom, hydrogens included:
110 Da per residue over 7.8 heavy atoms per residue; 14 / 0.81 ≈ 17.3 Å³.)

``protein_like(n, seed)`` grows a self-avoiding chain with those local
geometries inside a sphere sized for that density. Each new atom is placed
1.5 Å from the last one at a 110° bond angle and a random torsion; a candidate
is accepted only if it lies inside the sphere and keeps ``min_gap`` from every
atom except its two chain predecessors. When no candidate fits, the chain
backtracks a few atoms; if it keeps jamming the sphere is enlarged by 1%. The
density reached is returned with the coordinates so that it can be reported.

Elements are drawn independently with the heavy-atom composition of an average
protein (per residue ≈ 4.9 C, 1.35 N, 1.5 O, 0.04 S): C 62%, N 17%, O 20%, S 1%.
"""

import math

import numpy as np

ELEMENTS = ("C", "N", "O", "S")
FRACTIONS = (0.62, 0.17, 0.20, 0.01)
VOLUME_PER_ATOM = 17.5  # Å³ per heavy atom
BOND = 1.5  # Å
ANGLE = math.radians(110.0)


def _frame_candidates(p2, p1, p0, rng, k):
    """k positions BOND from p0 at angle ANGLE to p1–p0, random torsions about p1–p0."""
    b = p0 - p1
    b /= np.linalg.norm(b)
    a = p1 - p2
    nrm = np.cross(a, b)
    if np.linalg.norm(nrm) < 1e-8:
        nrm = np.cross(b, [1.0, 0.0, 0.0])
        if np.linalg.norm(nrm) < 1e-8:
            nrm = np.cross(b, [0.0, 1.0, 0.0])
    nrm /= np.linalg.norm(nrm)
    m = np.cross(nrm, b)
    phi = rng.uniform(0.0, 2.0 * math.pi, size=k)
    # Direction of the new bond: angle (π − ANGLE) off the continuation of b.
    s, c = math.sin(math.pi - ANGLE), math.cos(math.pi - ANGLE)
    d = (c * b[None, :] + s * (np.cos(phi)[:, None] * m[None, :] + np.sin(phi)[:, None] * nrm[None, :]))
    return p0[None, :] + BOND * d


def protein_like(n, seed, min_gap=2.9, tries=48):
    """Return (elements, positions, density) of an n-atom protein-like globule.

    Parameters
    ----------
    n : int
        Number of heavy atoms.
    seed : int
    min_gap : float
        Smallest distance allowed between atoms more than two bonds apart (Å).
    tries : int
        Candidate torsions tried per atom.

    Returns
    -------
    elements : list of str
    positions : ndarray (n, 3), Å, centred on the origin
    density : float
        Atoms per Å³ inside the sphere of radius sqrt(5/3)·Rg (the radius of a
        uniform ball with the cloud's radius of gyration Rg).
    """
    rng = np.random.default_rng(seed)
    radius = (3.0 * n * VOLUME_PER_ATOM / (4.0 * math.pi)) ** (1.0 / 3.0)
    pos = np.zeros((n, 3))
    # Start near the centre with a bent three-atom seed.
    pos[1] = [BOND, 0.0, 0.0]
    pos[2] = pos[1] + BOND * np.array([math.cos(math.pi - ANGLE), math.sin(math.pi - ANGLE), 0.0])
    pos[:3] -= pos[:3].mean(axis=0)
    i, jams, gap2 = 3, 0, min_gap * min_gap
    while i < n:
        cand = _frame_candidates(pos[i - 3] if i >= 3 else pos[0], pos[i - 2], pos[i - 1], rng, tries)
        ok = np.einsum("ij,ij->i", cand, cand) <= radius * radius
        if i > 2 and ok.any():
            diff = cand[:, None, :] - pos[None, : i - 2, :]
            d2 = np.einsum("ijk,ijk->ij", diff, diff)
            ok &= (d2 >= gap2).all(axis=1)
        if ok.any():
            choice = rng.choice(np.flatnonzero(ok))
            pos[i] = cand[choice]
            i += 1
            continue
        jams += 1
        if jams % 20 == 0:
            radius *= 1.01
        i = max(3, i - int(rng.integers(1, 6)))
    pos -= pos.mean(axis=0)
    rg = math.sqrt(np.mean(np.einsum("ij,ij->i", pos, pos)))
    r_ball = math.sqrt(5.0 / 3.0) * rg
    density = n / (4.0 / 3.0 * math.pi * r_ball ** 3)
    elements = list(rng.choice(ELEMENTS, size=n, p=FRACTIONS))
    return elements, pos, density
