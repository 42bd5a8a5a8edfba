"""Remote archives: a real S3 emulator (moto's server on 127.0.0.1) read with the real s3fs client."""

import json
import os
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest

from curvedoc.audit import remote
from curvedoc.audit.remote import Mirror, is_remote, mirror, parse_storage_options, storage_kwargs
from curvedoc.errors import CurvedocError
from curvedoc.readers import discover, read_source

s3fs = pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

FIXTURES = Path(__file__).parent.parent / "fixtures"
ARCHIVE_FAMILIES = ("tensorboard", "csv", "mlflow", "wandb", "huggingface", "jsonl")
BUCKET = "curvedoc-archive"
PREFIX = f"s3://{BUCKET}/archive"
OFFLINE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",  # botocore would otherwise ask 169.254.169.254 for credentials
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    with pytest.MonkeyPatch.context() as patch:
        for name, value in OFFLINE_AWS.items():
            patch.setenv(name, value)
        patch.delenv("AWS_PROFILE", raising=False)
        patch.delenv("AWS_ENDPOINT_URL", raising=False)
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        before = set(threading.enumerate())
        server.start()
        try:
            host, port = server.get_host_and_port()
            yield f"http://{host}:{port}"
        finally:
            server.stop()
        # fsspec's event loop and its resolver pool are shared by every fsspec user of the process; the server's
        # thread and socket must be gone
        leftover = [thread for thread in set(threading.enumerate()) - before
                    if thread.name != "fsspecIO" and not thread.name.startswith("asyncio_")]
        for thread in leftover:  # a request handler may still be finishing its last response as the server stops
            thread.join(timeout=5)
        assert not [thread for thread in leftover if thread.is_alive()]
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((host, port), timeout=5).close()


@pytest.fixture(scope="module")
def staging(tmp_path_factory):
    """The archive as it would sit on a disk: real fixture runs plus what a mirror must leave behind."""
    root = tmp_path_factory.mktemp("staging") / "archive"
    for family in ARCHIVE_FAMILIES:
        for path in (FIXTURES / family).rglob("*"):
            # object stores have no symlinks (W&B's latest-run); a real copy would be a second run
            if path.is_file() and not any(p.is_symlink() for p in [path, *path.parents]):
                target = root / family / path.relative_to(FIXTURES / family)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    (root / "tensorboard" / "lightning" / "model.pt").write_bytes(os.urandom(3 << 20))
    (root / "wandb" / "console").mkdir()
    (root / "wandb" / "console" / "output.log").write_text("Epoch 1: loss went down, all good\n" * 4000)
    vocabulary = {f"token{number}": number for number in range(20000)}
    (root / "wandb" / "console" / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocabulary}}))
    table = "epoch,loss,val_loss\n" + "".join(f"{i},{1 / (i + 1):.6f},{1.1 / (i + 1):.6f}\n" for i in range(6000))
    (root / "keras").mkdir()
    (root / "keras" / "training.log").write_text(table)  # Keras CSVLogger: a CSV under a .log name
    # a model config with thousands of labels: read beside trainer_state.json for the class count
    big_labels = root / "huggingface" / "many_labels"
    big_labels.mkdir()
    shutil.copy2(FIXTURES / "huggingface" / "digits_mlp" / "trainer_state.json", big_labels)
    labels = [f"synset {number:05d} (a class name as long as ImageNet's)" for number in range(3000)]
    (big_labels / "config.json").write_text(json.dumps({"id2label": dict(enumerate(labels)),
                                                        "label2id": {label: i for i, label in enumerate(labels)}}))
    (root / "csv" / ".ipynb_checkpoints").mkdir()
    (root / "csv" / ".ipynb_checkpoints" / "metrics.csv").write_text("a,b\n1,2\n")
    return root


def s3(endpoint):
    return s3fs.S3FileSystem(endpoint_url=endpoint, skip_instance_cache=True)


def upload(endpoint, staging, prefix):
    local = [path for path in staging.rglob("*") if path.is_file()]
    s3(endpoint).put([str(path) for path in local], [f"{prefix}/{path.relative_to(staging).as_posix()}" for path in local])


@pytest.fixture(scope="module")
def bucket(endpoint, staging):
    """The archive in the emulator; tests that change objects change their own copy (see ``changing``)."""
    fs = s3(endpoint)
    fs.mkdir(BUCKET)
    upload(endpoint, staging, f"{BUCKET}/archive")
    yield fs
    fs.rm(BUCKET, recursive=True)


@pytest.fixture
def changing(bucket, staging):
    """A copy of the archive under its own prefix, for a test that rewrites and deletes objects."""
    upload(bucket.endpoint_url, staging, f"{BUCKET}/changing")
    yield f"s3://{BUCKET}/changing"
    bucket.rm(f"{BUCKET}/changing", recursive=True)


@pytest.fixture
def requests(monkeypatch):
    """Counts the objects s3fs downloads (whole or a range of bytes) during a test."""
    counted = {"get": [], "cat": []}
    for method, kind in (("_get_file", "get"), ("_cat_file", "cat")):
        original = getattr(s3fs.S3FileSystem, method)

        async def counting(self, path, *args, _original=original, _kind=kind, **kwargs):
            counted[_kind].append(path)
            return await _original(self, path, *args, **kwargs)

        monkeypatch.setattr(s3fs.S3FileSystem, method, counting)
    return counted


def options(endpoint):
    return {"endpoint_url": endpoint}


def local_files(root):
    return {path.relative_to(root).as_posix(): path for path in root.rglob("*")
            if path.is_file() and remote.SYNC_FOLDER not in path.parts}


def snapshot(root):
    return {name: (path.stat().st_ino, path.stat().st_mtime_ns) for name, path in local_files(root).items()}


def test_is_remote():
    assert is_remote("s3://bucket/runs") and is_remote("gs://b") and is_remote("gcs://b/p")
    assert is_remote("az://c/p") and is_remote("abfs://c/p") and is_remote("https://host/runs")
    assert is_remote("memory://x") and is_remote("simplecache::s3://b/p")
    assert not is_remote("runs/exp1") and not is_remote("/data/runs") and not is_remote("file:///data/runs")
    assert not is_remote("C:\\runs") and not is_remote("C:/runs")
    assert not is_remote(Path("s3://bucket"))  # a Path has already lost the URL's double slash


def test_storage_options_parse_and_type():
    parsed = parse_storage_options(["endpoint_url=http://127.0.0.1:9000", "anon=true", "client_kwargs.region_name=eu",
                                    "default_block_size=1048576", "secret=007", "token=a=b", "timeout=2.5"])
    assert parsed["token"] == "a=b"
    assert storage_kwargs(parsed) == {
        "endpoint_url": "http://127.0.0.1:9000", "anon": True, "client_kwargs": {"region_name": "eu"},
        "default_block_size": 1048576, "secret": "007", "token": "a=b", "timeout": 2.5,
    }
    assert storage_kwargs({"anon": False, "use_ssl": "False"}) == {"anon": False, "use_ssl": False}
    for bad in ("endpoint_url", "=x"):
        with pytest.raises(CurvedocError, match="expected KEY=VALUE"):
            parse_storage_options([bad])


def test_mirror_fetches_every_log_with_its_size_and_time_and_nothing_else(bucket, staging, tmp_path):
    result = mirror(PREFIX + "/", tmp_path / "mirror", options(bucket.endpoint_url))
    assert result.url == PREFIX and result.local_root == tmp_path / "mirror"
    fetched = local_files(result.local_root)
    listing = bucket.find(f"{BUCKET}/archive", detail=True)
    for name, path in fetched.items():
        assert path.stat().st_size == (staging / name).stat().st_size
        assert path.read_bytes() == (staging / name).read_bytes()
        info = listing[f"{BUCKET}/archive/{name}"]
        assert path.stat().st_mtime == pytest.approx(info["LastModified"].timestamp())
    assert "tensorboard/lightning/model.pt" not in fetched
    assert "wandb/console/tokenizer.json" not in fetched  # no log, as its first bytes show
    assert "wandb/console/output.log" in fetched  # captured output: whether it holds a log shows only in reading it
    assert "keras/training.log" in fetched  # a CSV under a .log name
    assert (staging / "huggingface/many_labels/config.json").stat().st_size > remote.FETCHED_WHOLE_BELOW
    assert "huggingface/many_labels/config.json" in fetched
    assert not any(".ipynb_checkpoints" in name for name in fetched)
    mlflow_metric = next(name for name in fetched if "/mlruns/" in name and "/metrics/" in name)
    assert "." not in Path(mlflow_metric).name

    # what discovery and the readers find in the mirror is what they find in the archive itself
    assert runs_found(result.local_root) == runs_found(staging)


def runs_found(root):
    found = discover(root)
    runs = []
    for source in found.sources:
        try:
            read = read_source(source)
        except CurvedocError as error:
            runs.append((source.family, str(source.path.relative_to(root)), "unreadable", error.problem))
            continue
        runs.extend((source.family, str(source.path.relative_to(root)), run.name, len(run.scalars),
                     json.dumps(run.meta.hparams, sort_keys=True, default=str), run.meta.n_classes)
                    for run in read)
    problems = sorted(problem.replace(str(root), "ROOT") for problem in found.problems)
    return sorted(runs, key=str), problems


def test_second_sync_fetches_nothing_and_changes_fetch_only_themselves(bucket, changing, tmp_path, requests):
    endpoint = bucket.endpoint_url
    into = tmp_path / "mirror"
    first = mirror(changing, into, options(endpoint))
    assert requests["cat"]  # the big tokenizer.json was peeked
    before = snapshot(into)

    requests["get"].clear(), requests["cat"].clear()
    mirror(changing, into, options(endpoint))
    assert requests == {"get": [], "cat": []}
    assert snapshot(into) == before

    # same size; within the same second only the ETag tells this object changed
    changed = "csv/generic/lr_too_high.csv"
    original = bucket.cat(f"{changing}/{changed}")
    bucket.pipe(f"{changing}/{changed}", original.replace(b"1", b"2"))
    removed_run = "tensorboard/tensorboard_api"
    bucket.rm(f"{changing}/{removed_run}", recursive=True)
    bucket.rm(f"{changing}/csv/generic/healthy.tsv")
    requests["get"].clear(), requests["cat"].clear()
    mirror(changing, into, options(endpoint))
    assert requests == {"get": [f"{changing.removeprefix('s3://')}/{changed}"], "cat": []}
    after = snapshot(into)
    assert (into / changed).read_bytes() == original.replace(b"1", b"2")
    assert not (into / removed_run).exists() and not (into / "csv/generic/healthy.tsv").exists()
    unchanged = {name: stamp for name, stamp in before.items()
                 if name != changed and not name.startswith(removed_run) and name != "csv/generic/healthy.tsv"}
    assert {name: after[name] for name in unchanged} == unchanged
    assert first.display(into / changed) == f"{changing}/{changed}"


def test_interrupted_sync_leaves_no_half_file_and_the_next_one_completes(bucket, tmp_path, monkeypatch):
    endpoint = bucket.endpoint_url
    original = s3fs.S3FileSystem._get_file
    seen = []

    async def failing_after_a_few(self, rpath, lpath, **kwargs):
        seen.append(rpath)
        if len(seen) > 5:
            with open(lpath, "wb") as handle:
                handle.write(b"half")  # what a dropped connection leaves behind
            raise ConnectionResetError("connection reset by peer")
        return await original(self, rpath, lpath, **kwargs)

    monkeypatch.setattr(s3fs.S3FileSystem, "_get_file", failing_after_a_few)
    into = tmp_path / "mirror"
    with pytest.raises(CurvedocError) as error:
        mirror(PREFIX, into, options(endpoint))
    assert str(error.value).startswith(PREFIX + ": ") and "\n" not in str(error.value)
    assert not [path for path in local_files(into).values() if path.read_bytes() == b"half"]

    monkeypatch.setattr(s3fs.S3FileSystem, "_get_file", original)
    result = mirror(PREFIX, into, options(endpoint))
    assert not list((into / remote.SYNC_FOLDER).glob("partial*/*"))
    for name, path in local_files(into).items():
        assert path.read_bytes() == bucket.cat(f"{BUCKET}/archive/{name}")
    assert result.local_root == into


def test_one_object_url_is_fetched_whatever_its_name(bucket, tmp_path):
    url = f"{PREFIX}/csv/generic/lr_too_high.csv"
    result = mirror(url, tmp_path / "m", options(bucket.endpoint_url))
    assert result.local_root == tmp_path / "m" / "lr_too_high.csv"
    assert result.local_root.read_bytes() == bucket.cat(url)
    assert result.display(result.local_root) == url


def test_fsspec_configuration_supplies_the_endpoint(bucket, tmp_path, monkeypatch):
    import fsspec.config

    monkeypatch.setitem(fsspec.config.conf, "s3", {"endpoint_url": bucket.endpoint_url})  # as FSSPEC_S3_ENDPOINT_URL
    result = mirror(f"{PREFIX}/csv", tmp_path / "m")
    assert "generic/lr_too_high.csv" in local_files(result.local_root)


def test_missing_bucket_and_prefix_are_one_line_errors(endpoint, tmp_path):
    with pytest.raises(CurvedocError) as error:
        mirror("s3://no-such-bucket-here/runs", tmp_path / "m", options(endpoint))
    assert str(error.value) == "s3://no-such-bucket-here/runs: not found (The specified bucket does not exist)"
    fs = s3(endpoint)
    fs.mkdir("empty-bucket")
    try:
        with pytest.raises(CurvedocError, match=r"^s3://empty-bucket/runs: nothing there"):
            mirror("s3://empty-bucket/runs", tmp_path / "m", options(endpoint))
    finally:
        fs.rm("empty-bucket", recursive=True)


def test_access_denied_is_a_one_line_error(bucket, tmp_path, monkeypatch):
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin

    # the emulator starts checking signatures; our dummy key belongs to no IAM user
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    monkeypatch.setattr(ActionAuthenticatorMixin, "request_count", 0)
    with pytest.raises(CurvedocError) as error:
        mirror(PREFIX, tmp_path / "m", options(bucket.endpoint_url))
    assert str(error.value).startswith(f"{PREFIX}: access denied (") and "\n" not in str(error.value)


def test_refused_connection_is_a_one_line_error(tmp_path, monkeypatch, endpoint):
    monkeypatch.setattr(s3fs.S3FileSystem, "retries", 1)
    closed = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(CurvedocError) as error:
        mirror(PREFIX, tmp_path / "m", {"endpoint_url": closed, "config_kwargs.retries.max_attempts": "1"})
    assert str(error.value).startswith(f"{PREFIX}: cannot connect to the storage endpoint (")
    assert "\n" not in str(error.value)


def test_missing_packages_name_the_install(tmp_path, monkeypatch):
    from fsspec.registry import _registry

    monkeypatch.delitem(_registry, "s3", raising=False)
    monkeypatch.setitem(sys.modules, "s3fs", None)
    with pytest.raises(CurvedocError) as error:
        mirror("s3://bucket/runs", tmp_path / "m")
    assert str(error.value) == ("s3://bucket/runs: reading s3:// needs s3fs, part of the remote extra: "
                                "pip install 'curvedoc[remote]'")

    monkeypatch.delitem(_registry, "az", raising=False)
    monkeypatch.setitem(sys.modules, "adlfs", None)
    with pytest.raises(CurvedocError, match=r"reading az:// needs adlfs: pip install adlfs$"):
        mirror("az://container/runs", tmp_path / "m")

    monkeypatch.setitem(sys.modules, "fsspec", None)
    monkeypatch.setitem(sys.modules, "fsspec.core", None)
    with pytest.raises(CurvedocError, match=r"^gs://b/runs: reading gs:// needs the remote extra: pip install"):
        mirror("gs://b/runs", tmp_path / "m")


def test_unknown_protocol_is_a_one_line_error(tmp_path):
    with pytest.raises(CurvedocError, match=r"^nosuchproto://b/runs: unknown storage protocol nosuchproto://"):
        mirror("nosuchproto://b/runs", tmp_path / "m")


def test_display_maps_mirror_paths_back_to_the_url(tmp_path):
    view = Mirror("s3://bucket/prefix", tmp_path / "mirror")
    assert view.display(tmp_path / "mirror") == "s3://bucket/prefix"
    assert view.display(str(tmp_path / "mirror" / "run1" / "metrics.csv")) == "s3://bucket/prefix/run1/metrics.csv"
    assert view.display(tmp_path / "elsewhere.csv") == str(tmp_path / "elsewhere.csv")
    line = f"{tmp_path / 'mirror' / 'run1' / 'x.csv'}: empty file"
    assert view.display_text(line) == "s3://bucket/prefix/run1/x.csv: empty file"


def test_object_names_that_are_not_local_paths_stay_remote(tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe({"/keys/ok/metrics.csv": b"step,loss\n1,2\n", "/keys/ok/../../escape.csv": b"step,loss\n1,2\n"})
    try:
        result = mirror("memory://keys", tmp_path / "m")
    finally:
        fs.rm("/keys", recursive=True)
    assert sorted(local_files(result.local_root)) == ["ok/metrics.csv"]
    assert not (tmp_path / "escape.csv").exists()
    assert result.problems and "escape.csv" in result.problems[0]


def audit_json(argv, capsys):
    from curvedoc.cli import main

    capsys.readouterr()
    code = main(["audit", *argv, "--format", "json", "-j", "1", "--fail-on", "never"])
    output = capsys.readouterr()
    assert code == 0, output.err
    return json.loads(output.out)


def test_audit_of_a_bucket_matches_the_audit_of_the_same_runs_on_disk(bucket, staging, tmp_path, capsys):
    audit = pytest.importorskip("curvedoc.audit")
    if not hasattr(audit, "audit"):
        pytest.skip("curvedoc.audit.audit not built yet")
    storage = ["--storage-option", f"endpoint_url={bucket.endpoint_url}"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    remote_index = audit_json([PREFIX, *storage, *cache], capsys)
    local_index = audit_json([str(staging), "--no-cache"], capsys)

    def comparable(index, root):
        text = json.dumps({key: index[key] for key in ("runs", "cross_run", "unreadable", "by_symptom")})
        return json.loads(text.replace(json.dumps(root)[1:-1], "ROOT"))

    assert remote_index["roots"] == [PREFIX]
    assert remote_index["runs"] and all(run["path"].startswith(PREFIX + "/") for run in remote_index["runs"])
    assert all(item["path"].startswith(PREFIX + "/") for item in remote_index["unreadable"])
    assert comparable(remote_index, PREFIX) == comparable(local_index, str(staging))
    assert not list((tmp_path / "cache").rglob("model.pt"))

    # the mirror keeps each object's own time, so the audit cache still knows every run
    again = audit_json([PREFIX, *storage, *cache], capsys)
    assert again["totals"]["cached"] == again["totals"]["runs"] and again["totals"]["analysed"] == 0
    assert comparable(again, PREFIX) == comparable(remote_index, PREFIX)
