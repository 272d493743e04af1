"""The resolution order of dpcore.data.fetch (cache, mirror, download), against a test manifest.

No test touches the network: downloads are served by an HTTP server on 127.0.0.1.
"""

import bz2
import functools
import gzip
import hashlib
import http.server
import io
import json
import os
import socket
import threading
import time
import zipfile

import pytest

from dpcore.data import resolve as F
from dpcore.data.manifest import DataError, ManifestError, load_manifest

PAYLOAD = b"label,value\n" + b"".join(f"{i},{i * i}\n".encode() for i in range(200))


@pytest.fixture
def http_server(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path/www`` (no network needed)."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *args, **kwargs: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield www, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def _manifest(tmp_path, files, name="toy"):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"datasets": {name: {"title": "Toy", "splits": {}, "files": files}}}))
    return path


def _entry(payload=PAYLOAD, *, urls=(), mirror="toy/table.csv", algorithm="sha256", of="file", **extra):
    return {"urls": list(urls), "mirror": mirror, "bytes": len(payload),
            algorithm: hashlib.new(algorithm, payload).hexdigest(), "digest_of": of, **extra}


@pytest.fixture
def dirs(tmp_path):
    cache, mirror = tmp_path / "cache", tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    return cache, mirror


def test_mirror_copy_is_verified_then_served_from_the_cache(tmp_path, dirs):
    cache, mirror = dirs
    (mirror / "toy" / "table.csv").write_bytes(PAYLOAD)
    manifest = _manifest(tmp_path, {"table.csv": _entry()})
    path = F.fetch("toy", "table.csv", root=cache, mirror=mirror, manifest=manifest)
    assert path == cache / "table.csv" and path.read_bytes() == PAYLOAD
    (mirror / "toy" / "table.csv").unlink()  # the cached copy is enough now
    assert F.fetch("toy", "table.csv", root=cache, mirror=mirror, manifest=manifest) == path
    assert not list(cache.glob(".*.part"))


def test_corrupt_cache_is_replaced_from_the_mirror(tmp_path, dirs):
    cache, mirror = dirs
    (mirror / "toy" / "table.csv").write_bytes(PAYLOAD)
    cache.mkdir()
    (cache / "table.csv").write_bytes(PAYLOAD.replace(b"1", b"7"))
    manifest = _manifest(tmp_path, {"table.csv": _entry()})
    assert F.fetch("toy", "table.csv", root=cache, mirror=mirror, manifest=manifest).read_bytes() == PAYLOAD


def test_download_from_a_local_http_server(tmp_path, dirs, http_server):
    cache, _ = dirs
    www, url = http_server
    (www / "table.csv").write_bytes(PAYLOAD)
    manifest = _manifest(tmp_path, {"table.csv": _entry(urls=[url + "missing.csv", url + "table.csv"])})
    path = F.fetch("toy", "table.csv", root=cache, mirror=tmp_path / "nonexistent", manifest=manifest)
    assert path.read_bytes() == PAYLOAD


def test_download_of_a_zip_member(tmp_path, dirs, http_server):
    cache, _ = dirs
    www, url = http_server
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "x")
        archive.writestr("table.csv", PAYLOAD)
    (www / "bundle.zip").write_bytes(buffer.getvalue())
    manifest = _manifest(tmp_path, {"table.csv": _entry(urls=[url + "bundle.zip"], member="table.csv")})
    assert F.fetch("toy", "table.csv", root=cache, manifest=manifest, mirror=tmp_path).read_bytes() == PAYLOAD


def test_a_download_with_the_wrong_checksum_is_refused(tmp_path, dirs, http_server):
    cache, _ = dirs
    www, url = http_server
    (www / "table.csv").write_bytes(PAYLOAD + b"extra\n")
    manifest = _manifest(tmp_path, {"table.csv": _entry(urls=[url + "table.csv"])})
    with pytest.raises(DataError, match=r"download http://127\.0\.0\.1:\d+/table\.csv: sha256 \w+ != expected"):
        F.fetch("toy", "table.csv", root=cache, mirror=tmp_path / "none", manifest=manifest)
    assert not (cache / "table.csv").exists() and not list(cache.glob(".*"))


def test_nothing_works_names_dataset_file_mirror_url_and_remedy(tmp_path, dirs):
    cache, mirror = dirs
    url = "http://127.0.0.1:9/table.csv"  # discard port: connection refused at once
    manifest = _manifest(tmp_path, {"table.csv": _entry(urls=[url])})
    with pytest.raises(DataError) as info:
        F.fetch("toy", "table.csv", root=cache, mirror=mirror, manifest=manifest)
    text = str(info.value)
    for part in ("'toy'", "'table.csv'", f"cache {cache / 'table.csv'}: missing", f"mirror {mirror}: no toy/table.csv",
                 f"download {url}", "DPCORE_DATA_MIRROR", "put a verified copy at"):
        assert part in text, part
    assert "\n" not in text  # one line: the runner prints it whole


@pytest.mark.timeout(25)  # DPCORE_DOWNLOAD_TIMEOUT ignored would wait its default 30 s: only that reaches this guard
def test_a_silent_server_fails_fast(tmp_path, dirs, monkeypatch):
    cache, _ = dirs
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts the connection, never answers
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/table.csv"
    manifest = _manifest(tmp_path, {"table.csv": _entry(urls=[url])})
    monkeypatch.setenv("DPCORE_DOWNLOAD_TIMEOUT", "0.5")
    with pytest.raises(DataError, match="timed out"):
        F.fetch("toy", "table.csv", root=cache, mirror=tmp_path / "none", manifest=manifest)
    listener.close()


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_bad_download_timeout_is_named(monkeypatch, value):
    monkeypatch.setenv("DPCORE_DOWNLOAD_TIMEOUT", value)
    with pytest.raises(ValueError, match="DPCORE_DOWNLOAD_TIMEOUT"):
        F.download_timeout()


def test_a_file_without_manifest_entry_is_refused(tmp_path, dirs):
    cache, mirror = dirs
    (mirror / "toy" / "table.csv").write_bytes(PAYLOAD)
    manifest = _manifest(tmp_path, {"table.csv": _entry()})
    with pytest.raises(DataError, match="no entry in the manifest .*refusing to load it unverified"):
        F.fetch("toy", "other.csv", root=cache, mirror=mirror, manifest=manifest)
    with pytest.raises(DataError, match="data set 'nope' is not in the manifest"):
        F.fetch("nope", "table.csv", root=cache, mirror=mirror, manifest=manifest)


@pytest.mark.parametrize(
    "text, match",
    [
        ("{not json", "not valid JSON"),
        ('{"files": {}}', "'datasets' object"),
        ('{"datasets": {"toy": {"files": {"a.csv": {"digest_of": "file"}}}}}', "exactly one checksum"),
        ('{"datasets": {"toy": {"files": {"a.csv": {"md5": "xyz", "digest_of": "file"}}}}}', "not a hex digest"),
        ('{"datasets": {"toy": {"files": {"a.csv": {"md5": "' + "0" * 32 + '", "digest_of": "content"}}}}}',
         "needs a .gz or .bz2"),
        ('{"datasets": {"toy": {"files": {"../a.csv": {"md5": "' + "0" * 32 + '", "digest_of": "file"}}}}}',
         "relative path inside"),
    ],
)
def test_malformed_manifest_names_the_file(tmp_path, text, match):
    path = tmp_path / "broken-manifest.json"
    path.write_text(text)
    with pytest.raises(ManifestError, match=match) as info:
        load_manifest(path)
    assert str(path) in str(info.value)
    with pytest.raises(ManifestError, match="broken-manifest.json"):
        load_manifest(tmp_path / "broken-manifest.json.missing")


def test_content_checksum_accepts_any_compression_of_the_same_content(tmp_path, dirs):
    cache, mirror = dirs
    md5 = hashlib.md5(PAYLOAD).hexdigest()
    manifest = _manifest(tmp_path, {
        "t.gz": {"mirror": "toy/t.gz", "md5": md5, "digest_of": "content"},
        "t.bz2": {"mirror": "toy/t.bz2", "md5": md5, "digest_of": "content"},
    })
    (mirror / "toy" / "t.gz").write_bytes(gzip.compress(PAYLOAD, compresslevel=9, mtime=0))
    (mirror / "toy" / "t.bz2").write_bytes(bz2.compress(PAYLOAD))
    assert gzip.decompress(F.fetch("toy", "t.gz", root=cache, mirror=mirror, manifest=manifest).read_bytes()) == PAYLOAD
    F.fetch("toy", "t.bz2", root=cache, mirror=mirror, manifest=manifest)
    # a different gzip container of the same content (the publisher's vs the rebuilt one) also verifies
    (cache / "t.gz").write_bytes(gzip.compress(PAYLOAD, compresslevel=1, mtime=12345))
    (mirror / "toy" / "t.gz").unlink()
    assert F.fetch("toy", "t.gz", root=cache, mirror=mirror, manifest=manifest) == cache / "t.gz"
    # other content does not, even though it is a valid gzip file
    (cache / "t.gz").write_bytes(gzip.compress(PAYLOAD + b"x"))
    with pytest.raises(DataError, match=r"content md5 \w+ != expected"):
        F.fetch("toy", "t.gz", root=cache, mirror=mirror, manifest=manifest)


def test_a_rewritten_file_is_hashed_again_even_with_its_mtime_restored(tmp_path, dirs):
    cache, mirror = dirs
    (mirror / "toy" / "table.csv").write_bytes(PAYLOAD)
    manifest = _manifest(tmp_path, {"table.csv": _entry()})
    path = F.fetch("toy", "table.csv", root=cache, mirror=mirror, manifest=manifest)
    entry = F.find_entry("toy", "table.csv", manifest)
    assert F.verify(path, entry) is None  # the digest of this version is now remembered
    st = path.stat()
    time.sleep(0.05)
    with open(path, "r+b") as handle:  # same size, same inode, one byte changed
        handle.write(b"L")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size
    assert F.verify(path, entry) is not None
    (mirror / "toy" / "table.csv").unlink()
    with pytest.raises(DataError, match="cache .*sha256"):
        F.fetch("toy", "table.csv", root=cache, mirror=mirror, manifest=manifest)


def test_mirror_folder_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_DATA_MIRROR", str(tmp_path))
    assert F.mirror_dir() == tmp_path
    assert F.mirror_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("DPCORE_DATA_MIRROR", "")
    assert F.mirror_dir() is None


def test_download_every_file_of_a_data_set(tmp_path, dirs):
    cache, mirror = dirs
    (mirror / "toy" / "table.csv").write_bytes(PAYLOAD)
    manifest = _manifest(tmp_path, {"table.csv": _entry()})
    assert F.download("toy", cache, mirror=mirror, manifest=manifest) == cache
    assert (cache / "table.csv").read_bytes() == PAYLOAD
    with pytest.raises(ValueError, match="name must be one of"):
        F.download("imagenet", cache, manifest=manifest)
