"""Hostile or damaged inspect_ai logs: zip bombs (honest and lying size headers), data before
the archive, unknown compression, logs above the size limit. Each is one line naming the
file, and memory stays small: nothing is expanded in memory before the sizes are known."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
import zlib

import pytest

from evalbench.importers import OutcomeError, read_outcomes

# inspect_ai takes ~2 s to import: its tests share one test process (xdist_group)
pytestmark = pytest.mark.xdist_group("inspect_ai")

MB = 2**20
ZSTD, DEFLATE, BZIP2 = 93, 8, 12


def deflated_zeros(n_mb: int) -> bytes:
    """A raw deflate stream of ``n_mb`` MiB of zero bytes, built in milliseconds: one 1 MiB
    block compressed once (full flush: it stands alone) repeated, then a final empty block."""
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = first.compress(bytes(MB)) + first.flush(zlib.Z_FULL_FLUSH)
    return block * n_mb + zlib.compressobj(9, zlib.DEFLATED, -15).flush()


def zstd_zeros(n_mb: int) -> bytes:
    """One zstd frame of ``n_mb`` MiB of zero bytes (what inspect_ai writes: zstd members)."""
    zstandard = pytest.importorskip("zstandard")
    compressor = zstandard.ZstdCompressor(level=3).compressobj()
    return b"".join([compressor.compress(bytes(MB)) for _ in range(n_mb)] + [compressor.flush()])


def build_zip(members: list[tuple[str, bytes, int, int]], prefix: bytes = b"") -> bytes:
    """A ZIP archive written byte by byte, so its headers can say anything: ``(name,
    compressed data, method, declared size)`` per member (CRC of the declared zeros)."""
    body, central = bytearray(), bytearray()
    for name, data, method, declared in members:
        raw = name.encode()
        crc = zlib.crc32(bytes(min(declared, 8 * MB)))
        head = (method, 0, 0, crc, len(data), declared, len(raw))
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, *head,
                               0, 0, 0, 0, 0, len(body)) + raw  # fmt: skip
        body += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, *head, 0) + raw + data
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members),
                      len(central), len(body), 0)  # fmt: skip
    return prefix + bytes(body) + bytes(central) + end


RSS_SCRIPT = textwrap.dedent("""
    import resource, sys
    from evalbench.importers import OutcomeError, read_outcomes
    import inspect_ai.log  # the reader's own imports, before the baseline
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for path in sys.argv[1:]:
        try:
            read_outcomes(path)
            print("read", path)
        except OutcomeError as exc:
            print(exc)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS grew {(after - before) / 1024:.0f} MB")
""")


@pytest.mark.slow
def test_zip_bombs_are_refused_with_small_memory(inspect_ai, tmp_path):
    """300 MiB of zeros in a 10 KB (zstd) and a 300 KB (deflate) file; the second's header
    says 1,000 bytes. Before: peak RSS grew about 605 MB for each, then a JSON error."""
    honest = tmp_path / "honest.eval"
    honest.write_bytes(build_zip([("header.json", zstd_zeros(300), ZSTD, 300 * MB)]))
    lying = tmp_path / "lying.eval"
    lying.write_bytes(build_zip([("header.json", deflated_zeros(300), DEFLATE, 1000)]))
    done = subprocess.run([sys.executable, "-c", RSS_SCRIPT, str(honest), str(lying)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == (
        f"{honest}: expands to 300.0 MB; evalbench reads logs up to 256.0 MB (raise it with "
        "--max-log-mb, or max_log_mb: in a compare params file)"
    )
    assert lines[1] == (
        f"{lying}: header.json: declares 1000 bytes but its data expands to more (a damaged "
        "or hostile archive)"
    )
    grew = int(lines[2].split()[3])
    print(lines[2])
    assert grew < 32  # both checked as streams, 1 MiB at a time


def test_a_lying_size_a_short_member_and_the_limit_are_one_line_each(inspect_ai, tmp_path):
    path = tmp_path / "x.eval"
    path.write_bytes(build_zip([("a.json", deflated_zeros(2), DEFLATE, 10)]))
    with pytest.raises(OutcomeError, match=r"x\.eval: a\.json: declares 10 bytes but its data "
                                           r"expands to more"):  # fmt: skip
        read_outcomes(path)
    path.write_bytes(build_zip([("a.json", deflated_zeros(2), DEFLATE, 3 * MB)]))
    with pytest.raises(OutcomeError, match=r"a\.json: declares 3145728 bytes but its data "
                                           r"expands to 2097152"):  # fmt: skip
        read_outcomes(path)
    path.write_bytes(build_zip([("a.json", deflated_zeros(2), DEFLATE, 2 * MB)] * 3))
    with pytest.raises(OutcomeError, match=r"expands to 6\.0 MB; evalbench reads logs up to 5\.0"):
        read_outcomes(path, max_log_bytes=5 * MB)


def test_data_before_the_archive_and_unknown_compression_are_refused(inspect_ai, tmp_path):
    """Readers disagree on where members start when something precedes the archive (Python's
    zipfile shifts every offset, inspect's reader does not): refused, not guessed."""
    path = tmp_path / "x.eval"
    path.write_bytes(build_zip([("a.json", b"{}", 0, 2)], prefix=b"#!/bin/sh\n"))
    with pytest.raises(OutcomeError, match=r"x\.eval: 10 bytes before the first member"):
        read_outcomes(path)
    path.write_bytes(build_zip([("a.json", b"BZh9", BZIP2, 2)]))
    with pytest.raises(OutcomeError, match=r"a\.json: compression method 12 \(evalbench reads "
                                           r"stored, deflate and zstd members\)"):  # fmt: skip
        read_outcomes(path)


def test_a_real_log_reads_within_the_limit_and_a_json_log_above_it_is_refused(hand_log, tmp_path):
    log = hand_log(tmp_path / "e.eval", {f"s{i}": 1.0 for i in range(8)})
    assert len(read_outcomes(log).outcomes) == 8
    with pytest.raises(OutcomeError, match=r"e\.eval: expands to \d+ bytes; evalbench reads "
                                           r"logs up to 1000 bytes"):  # fmt: skip
        read_outcomes(log, max_log_bytes=1000)
    json_log = hand_log(tmp_path / "j.json", {f"s{i}": 1.0 for i in range(8)})
    size = json_log.stat().st_size
    assert len(read_outcomes(json_log, max_log_bytes=size).outcomes) == 8
    with pytest.raises(OutcomeError, match=rf"j\.json: a log of {size} bytes; evalbench reads "
                                           rf"logs up to {size - 1} bytes"):  # fmt: skip
        read_outcomes(json_log, max_log_bytes=size - 1)


def test_the_limit_is_set_on_the_command_line(inspect_ai, tmp_path, capsys):
    from evalbench.cli import main

    path = tmp_path / "x.eval"
    path.write_bytes(build_zip([("header.json", deflated_zeros(2), DEFLATE, 2 * MB)]))
    args = ["compare", "--no-report", str(path), str(path)]
    assert main([*args, "--max-log-mb", "1"]) == 2
    assert "x.eval: expands to 2.0 MB; evalbench reads logs up to 1.0 MB" in capsys.readouterr().err
    assert main(args) == 2  # within the default limit: checked, then inspect refuses the zeros
    assert "x.eval: not a readable inspect_ai log" in capsys.readouterr().err
