"""A small PNG writer and colour map for the examples, with NumPy and the standard library only
(zlib for the compression, struct for the chunk headers), so that the pictures need no imaging
package.

    from _png import write_png, colorize
    write_png("out.png", colorize(values))        # a float field as a colour image
    write_png("gray.png", gray_uint8_2d)           # or a grayscale one
"""
import struct
import zlib

import numpy as np

# A perceptually ordered dark-to-bright map (sampled from matplotlib's "magma": black, purple,
# red, orange, pale yellow); colours between the stops are interpolated linearly.
_STOPS = np.array([
    [0, 0, 4], [28, 16, 68], [79, 18, 123], [129, 37, 129], [181, 54, 122],
    [229, 80, 100], [251, 135, 97], [254, 194, 135], [252, 253, 191],
], dtype=np.float64)


def colorize(values, vmin=None, vmax=None):
    """Maps a 2-d array of numbers to an (h, w, 3) uint8 RGB image: `vmin` (default: the
    minimum) is the darkest colour, `vmax` (default: the maximum) the brightest. NaNs are
    drawn black."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"colorize takes a 2-d array, not {v.ndim}-d")
    finite = v[np.isfinite(v)]
    lo = float(finite.min()) if vmin is None and finite.size else (vmin or 0.0)
    hi = float(finite.max()) if vmax is None and finite.size else (vmax or 1.0)
    t = (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
    t = np.clip(np.nan_to_num(t, nan=0.0), 0.0, 1.0) * (len(_STOPS) - 1)
    below = np.minimum(t.astype(np.int64), len(_STOPS) - 2)
    frac = (t - below)[..., None]
    rgb = _STOPS[below] * (1.0 - frac) + _STOPS[below + 1] * frac
    rgb[~np.isfinite(v)] = 0.0
    return np.rint(rgb).astype(np.uint8)


def _chunk(tag, data):
    return (struct.pack(">I", len(data)) + tag + data +
            struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))


def write_png(path, image):
    """Writes `image` as an 8-bit PNG: a 2-d uint8 array is grayscale, an (h, w, 3) one RGB.
    Returns `path`."""
    img = np.ascontiguousarray(image)
    if img.dtype != np.uint8:
        raise ValueError(f"write_png takes uint8 pixels, not {img.dtype}")
    if img.ndim == 2:
        color_type = 0
    elif img.ndim == 3 and img.shape[2] == 3:
        color_type = 2
    else:
        raise ValueError(f"write_png takes an (h, w) or (h, w, 3) array, not {img.shape}")
    h, w = img.shape[:2]
    if h == 0 or w == 0:
        raise ValueError("write_png needs at least one pixel")
    rows = img.reshape(h, -1)
    # Each scanline starts with its filter type: 0, none.
    raw = np.hstack([np.zeros((h, 1), dtype=np.uint8), rows]).tobytes()
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)))
        f.write(_chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(_chunk(b"IEND", b""))
    return path


def read_png(path):
    """Reads back a PNG that write_png wrote (8-bit grayscale or RGB, filter 0, one IDAT):
    for the tests. Returns the uint8 array."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, chunks = 8, {}
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(tag + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"{path}: bad CRC in {tag!r}")
        chunks.setdefault(tag, b"")
        chunks[tag] += body
        pos += 12 + n
    w, h, depth, color_type = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 2: 3}[color_type]
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8)
    rows = raw.reshape(h, 1 + w * channels)
    if rows[:, 0].any():
        raise ValueError(f"{path}: filtered scanlines are not supported here")
    pixels = rows[:, 1:]
    return pixels.reshape(h, w) if channels == 1 else pixels.reshape(h, w, 3)
