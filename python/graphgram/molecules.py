"""Molecular graphs: from SMILES and RDKit molecules, and from 3D coordinates.

RDKit and ASE are optional; the functions that need them say so when they are
missing. The kernel preset for molecules is :func:`graphgram.molecular_kernel`.
"""

import zlib

import numpy as np

from .graph import Graph

# Symbols of elements 1..118, for turning symbols into atomic numbers without RDKit.
_SYMBOLS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr "
    "Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb "
    "Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf "
    "Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og"
).split()
ATOMIC_NUMBERS = {s: z for z, s in enumerate(_SYMBOLS, start=1)}


#: Vocabulary of the ``neighbors`` count vector: atomic numbers, 0 for any other element.
NEIGHBOR_ELEMENTS = (1, 5, 6, 7, 8, 9, 14, 15, 16, 17, 35, 53, 0)
#: Vocabulary of the ``ring_sizes`` count vector: 9 stands for rings of 9 atoms or more.
RING_SIZES = (3, 4, 5, 6, 7, 8, 9)


def _environment_hash(mol, atoms, radius):
    """Morgan-style (ECFP) atom identifiers after ``radius`` iterations, as 31-bit integers.

    The start invariant is (element, degree, hydrogens, charge, aromatic, in ring);
    each iteration hashes an atom's identifier with the sorted (bond order,
    identifier) pairs of its neighbours. CRC-32 keeps the hash the same in every
    process and Python version.
    """
    ids = [zlib.crc32(repr((a.GetAtomicNum(), a.GetDegree(), a.GetTotalNumHs(), a.GetFormalCharge(),
                            int(a.GetIsAromatic()), int(a.IsInRing()))).encode()) & 0x7FFFFFFF for a in atoms]
    for _ in range(radius):
        new = []
        for a in atoms:
            env = sorted((b.GetBondTypeAsDouble(), ids[b.GetOtherAtomIdx(a.GetIdx())]) for b in a.GetBonds())
            new.append(zlib.crc32(repr((ids[a.GetIdx()], env)).encode()) & 0x7FFFFFFF)
        ids = new
    return np.array(ids, dtype=np.int64)


def _rich_atom_features(mol, atoms, radius):
    n = len(atoms)
    col = {z: i for i, z in enumerate(NEIGHBOR_ELEMENTS)}
    neighbors = np.zeros((n, len(NEIGHBOR_ELEMENTS)))
    for a in atoms:
        for nb in a.GetNeighbors():
            neighbors[a.GetIdx(), col.get(nb.GetAtomicNum(), col[0])] += 1
    rings = np.zeros((n, len(RING_SIZES)))
    for ring in mol.GetRingInfo().AtomRings():
        c = min(len(ring), RING_SIZES[-1]) - RING_SIZES[0]
        for i in ring:
            rings[i, c] += 1
    return {
        "neighbors": neighbors,
        "ring_sizes": rings,
        "chirality": np.array([int(a.GetChiralTag()) for a in atoms], dtype=np.int64),
        "degree": np.array([a.GetDegree() for a in atoms], dtype=np.int64),
        "environment": _environment_hash(mol, atoms, radius),
    }


def _rdkit():
    try:
        from rdkit import Chem
    except ImportError:
        raise ImportError(
            "reading molecules needs RDKit, which is not installed; install it with "
            "`pip install rdkit` (or `pip install graphgram[chem]`)") from None
    return Chem


def from_rdkit(mol, hydrogens="implicit", features="all", radius=1):
    """Build a graph from an RDKit molecule.

    Parameters
    ----------
    mol : rdkit.Chem.Mol
    hydrogens : {"implicit", "explicit"}, default="implicit"
        ``"implicit"`` keeps the heavy atoms only, hydrogens counted in the atom
        attribute ``hcount``; ``"explicit"`` adds every hydrogen as a node.
    features : {"all", "basic"}, default="all"
        ``"basic"`` gives the attributes listed below only; ``"all"`` adds the
        richer atom features used in the literature (kernels read only the
        attributes they name, so unused ones cost nothing in a kernel call):

        - ``neighbors``: the multiset of neighbouring elements, as a count vector
          over :data:`NEIGHBOR_ELEMENTS` (H, B, C, N, O, F, Si, P, S, Cl, Br, I,
          other) — compare with :class:`~graphgram.microkernels.Convolution`;
        - ``ring_sizes``: how many rings (smallest set of smallest rings) of each
          size in :data:`RING_SIZES` (3..8, 9 for 9 or more) contain the atom;
        - ``chirality``: RDKit's ``ChiralType`` as an integer (0 unspecified,
          1 clockwise, 2 counter-clockwise, 3 other);
        - ``degree``: the number of neighbours in the graph;
        - ``environment``: a Morgan-style hash of the atom's environment of
          ``radius`` bonds (an integer label, equal for equal environments);

        and the bond attribute ``stereo`` (RDKit's ``BondStereo`` as an integer:
        0 none, 1 any, 2 Z, 3 E, 4 cis, 5 trans).
    radius : int, default=1
        Radius of the ``environment`` hash.

    Returns
    -------
    Graph
        Node attributes: ``element`` (atomic number), ``aromatic`` (bool),
        ``charge`` (formal charge), ``hybridization`` (RDKit's
        ``HybridizationType`` as an integer: 1 S, 2 SP, 3 SP2, 4 SP3, ...),
        ``hcount`` (total hydrogens attached), ``in_ring`` (bool).
        Edge attributes: ``order`` (1, 1.5 aromatic, 2, 3), ``aromatic``,
        ``conjugated`` and ``in_ring`` (bools). Weights are 1.
    """
    Chem = _rdkit()
    if not isinstance(mol, Chem.Mol):
        raise TypeError("from_rdkit expects an rdkit.Chem.Mol, got %s" % type(mol).__name__)
    if hydrogens not in ("implicit", "explicit"):
        raise ValueError("hydrogens must be 'implicit' or 'explicit', got %r" % (hydrogens,))
    if features not in ("all", "basic"):
        raise ValueError("features must be 'all' or 'basic', got %r" % (features,))
    if not (isinstance(radius, (int, np.integer)) and 0 <= radius <= 8):
        raise ValueError("radius must be an integer from 0 to 8, got %r" % (radius,))
    if hydrogens == "explicit":
        mol = Chem.AddHs(mol)
    atoms = list(mol.GetAtoms())
    bonds = list(mol.GetBonds())
    node_attrs = {
        "element": np.array([a.GetAtomicNum() for a in atoms], dtype=np.int64),
        "aromatic": np.array([a.GetIsAromatic() for a in atoms], dtype=bool),
        "charge": np.array([a.GetFormalCharge() for a in atoms], dtype=np.int64),
        "hybridization": np.array([int(a.GetHybridization()) for a in atoms], dtype=np.int64),
        "hcount": np.array([a.GetTotalNumHs() for a in atoms], dtype=np.int64),
        "in_ring": np.array([a.IsInRing() for a in atoms], dtype=bool),
    }
    edges = np.array([(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in bonds], dtype=np.int64).reshape(-1, 2)
    edge_attrs = {
        "order": np.array([b.GetBondTypeAsDouble() for b in bonds], dtype=np.float64),
        "aromatic": np.array([b.GetIsAromatic() for b in bonds], dtype=bool),
        "conjugated": np.array([b.GetIsConjugated() for b in bonds], dtype=bool),
        "in_ring": np.array([b.IsInRing() for b in bonds], dtype=bool),
    }
    if features == "all":
        node_attrs.update(_rich_atom_features(mol, atoms, int(radius)))
        edge_attrs["stereo"] = np.array([int(b.GetStereo()) for b in bonds], dtype=np.int64)
    return Graph(len(atoms), edges, None, node_attrs, edge_attrs)


def from_smiles(smiles, hydrogens="implicit", features="all", radius=1):
    """Build a graph from a SMILES string (parsed by RDKit); see :func:`from_rdkit`.

    Raises
    ------
    ValueError
        If RDKit cannot parse the string; the message quotes it.
    """
    Chem = _rdkit()
    if not isinstance(smiles, str):
        raise TypeError("SMILES must be a string, got %s" % type(smiles).__name__)
    mol = Chem.MolFromSmiles(smiles.strip())
    if mol is None:
        raise ValueError("RDKit could not parse the SMILES string %r" % smiles)
    return from_rdkit(mol, hydrogens=hydrogens, features=features, radius=radius)


def smooth_cutoff(r, cutoff):
    """Edge weight of two atoms at distance r: (1 − (r/cutoff)²)² inside the cutoff, 0 beyond.

    The weight is 1 at r = 0 and falls to 0 at the cutoff with a zero slope, so a
    small change of coordinates never makes an edge, or its weight, jump.
    """
    x = np.clip(np.asarray(r, dtype=np.float64) / cutoff, 0.0, 1.0)
    return (1.0 - x * x) ** 2


def from_coordinates(elements, positions, cutoff=5.0):
    """Build the molecular graph of atoms at 3D positions (Tang & de Jong 2019).

    Every pair of atoms closer than ``cutoff`` is joined by an edge whose weight
    decays smoothly to zero at the cutoff (:func:`smooth_cutoff`) and whose
    attribute ``length`` is the distance.

    Parameters
    ----------
    elements : sequence of str or int, length n
        Element symbols (``"C"``) or atomic numbers.
    positions : array-like, shape (n, 3)
        Coordinates, in the same unit as ``cutoff`` (Å for ASE).
    cutoff : float, default=5.0
        Largest distance that makes an edge.

    Returns
    -------
    Graph
        Node attribute ``element`` (atomic number); edge attribute ``length``.
    """
    pos = np.asarray(positions, dtype=np.float64)
    n = len(elements)
    if pos.shape != (n, 3):
        raise ValueError("positions must have shape (%d, 3) for %d elements, got %s" % (n, n, pos.shape))
    if not np.all(np.isfinite(pos)):
        raise ValueError("positions contain NaN or infinite values")
    if not (np.isfinite(cutoff) and cutoff > 0):
        raise ValueError("cutoff must be a positive distance, got %r" % (cutoff,))
    z = np.empty(n, dtype=np.int64)
    for i, e in enumerate(elements):
        if isinstance(e, str):
            if e not in ATOMIC_NUMBERS:
                raise ValueError("element %d: unknown element symbol %r" % (i, e))
            z[i] = ATOMIC_NUMBERS[e]
        else:
            z[i] = int(e)
    diff = pos[:, None, :] - pos[None, :, :]
    dist = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    iu, ju = np.triu_indices(n, k=1)
    d = dist[iu, ju]
    keep = d < cutoff
    edges = np.stack([iu[keep], ju[keep]], axis=1)
    length = d[keep]
    return Graph(n, edges, smooth_cutoff(length, cutoff), {"element": z}, {"length": length})


def from_ase(atoms, cutoff=5.0):
    """Build the molecular graph of an ASE ``Atoms`` object; see :func:`from_coordinates`."""
    try:
        import ase  # noqa: F401
    except ImportError:
        raise ImportError("from_ase needs ASE, which is not installed; `pip install ase`") from None
    return from_coordinates(atoms.get_atomic_numbers().tolist(), atoms.get_positions(), cutoff)
