"""Self-describing 4 KiB blocks for data-integrity tests.

A stamp names its block number, a write generation and the run's seed in a
32-byte header; the rest of the block is a pattern derived from the header.
So a block read back tells which write it came from, and a block that was
misdirected (another block's stamp), torn or mixed from two writes, or
garbage (an SSD slot that was never filled) does not parse.
"""

import hashlib
import struct

import directio

BLOCK = 4096
MAGIC = b"HOTTIER1"
_HEADER = struct.Struct("<8sQQQ")       # magic, block, generation, seed
_BODY_REPEAT = (BLOCK - _HEADER.size) // 32


def make(block, gen, seed):
    """The 4 KiB stamp of generation gen of block."""
    header = _HEADER.pack(MAGIC, block, gen, seed)
    return header + hashlib.blake2b(header, digest_size=32).digest() * \
        _BODY_REPEAT


def make_run(first_block, gens, seed):
    """Stamps of consecutive blocks from first_block, one gen each."""
    return b"".join(make(first_block + i, g, seed) for i, g in enumerate(gens))


class BadStamp(Exception):
    pass


def parse(data, block, seed):
    """The generation stamped in data, a 4 KiB block read at block number
    block. Raises BadStamp if data is not a whole stamp of that block and
    seed."""
    if len(data) != BLOCK:
        raise BadStamp(f"block {block}: {len(data)} bytes")
    magic, got_block, gen, got_seed = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise BadStamp(f"block {block}: no stamp (starts {data[:16].hex()})")
    if got_block != block:
        raise BadStamp(f"block {block}: holds block {got_block}'s stamp "
                       f"(gen {gen})")
    if got_seed != seed:
        raise BadStamp(f"block {block}: seed {got_seed}, expected {seed}")
    if data != make(block, gen, seed):
        raise BadStamp(f"block {block}: gen {gen} header with a body that "
                       f"does not match it (torn or mixed)")
    return gen


def fill(path, nr_blocks, seed, each=None):
    """Generation 0 of every one of the first nr_blocks blocks of path,
    written with O_DIRECT, 1 MiB at a time; each(block, stamp), if given,
    for every block written."""
    with directio.Direct(path, write=True) as d:
        for first in range(0, nr_blocks, 256):
            run = [make(b, 0, seed)
                   for b in range(first, min(first + 256, nr_blocks))]
            d.write(first * BLOCK, b"".join(run))
            if each:
                for b, data in enumerate(run, first):
                    each(b, data)
