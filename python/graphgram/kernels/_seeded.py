"""The one rule by which graphgram's randomized kernels draw their hash functions.

A kernel value must depend only on its two graphs and the kernel's settings, so
a random choice (a label's bit string, a projection coefficient, an offset) is
a function of ``random_state`` and the thing it belongs to (a label's own value,
a round, a column), never of which labels a call happens to contain. The rule:
the UTF-8 text ``"{random_state}|{part}|{part}…"`` is hashed by BLAKE2b, and its
digest read as little-endian 64-bit words. Labels are keyed ``s:<string>`` or
``i:<integer>`` (:func:`label_key`), so the string "1" and the number 1 differ.
"""

import hashlib
import numbers
import struct

__all__ = ["check_seed", "label_key", "seeded_uniforms", "seeded_words"]


def seeded_words(random_state, *parts, count=2):
    """Return ``count`` 64-bit words drawn from ``random_state`` and ``parts``."""
    text = "|".join(str(p) for p in (int(random_state),) + parts)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8 * count).digest()
    return struct.unpack("<%dQ" % count, digest)


def seeded_uniforms(random_state, *parts):
    """Return two uniforms in (0, 1) drawn from ``random_state`` and ``parts``."""
    a, b = seeded_words(random_state, *parts)
    return ((a >> 11) + 0.5) / 2.0 ** 53, ((b >> 11) + 0.5) / 2.0 ** 53


def label_key(label):
    """The key of a label value: ``s:<string>`` for strings, ``i:<integer>`` for
    numbers (whole floats are the integers they equal)."""
    if isinstance(label, str):
        return "s:%s" % label
    return "i:%d" % int(label)


def check_seed(kernel, what):
    """Raise TypeError unless ``kernel.random_state`` is an integer; ``what`` says
    what it seeds (it must be the same in every call)."""
    rs = kernel.random_state
    if not isinstance(rs, numbers.Integral) or isinstance(rs, bool):
        raise TypeError("random_state must be an integer (%s must be the same in every call), got %r" % (what, rs))
