"""The one-GPU measurement runs end to end on CPU with the tiny preset: states at 2Ψ/2Ψ/12Ψ, activations by length."""

from __future__ import annotations

import datetime
import json

import pytest

torch = pytest.importorskip("torch")

from course.errors import CourseError  # noqa: E402
from course.lab.decoder import PRESETS, Decoder  # noqa: E402
from course.lab.decoder_memory import main  # noqa: E402
from course.lab.gpu_memory_file import read_record  # noqa: E402

pytestmark = pytest.mark.torch


def test_each_static_state_is_its_share_of_16_psi(tiny_record):
    psi = tiny_record["model"]["psi"]
    expected = {"parameters": 2 * psi, "gradients": 2 * psi, "optimizer": 12 * psi, "total": 16 * psi}
    assert {k: v["counted_bytes"] for k, v in tiny_record["static"].items()} == expected
    assert {v["allocator_bytes"] for v in tiny_record["static"].values()} == {None}  # no caching allocator on CPU


def test_activations_grow_with_the_sequence_and_training_runs(tiny_record):
    short, long = tiny_record["activations"]
    assert (short["seq_len"], long["seq_len"]) == (16, 32)
    assert 1.9 < long["saved_for_backward_bytes"] / short["saved_for_backward_bytes"] < 2.1
    assert short["activation_bytes"] is None and long["peak_allocated_bytes"] is None
    assert all(len(s["losses"]) == 2 and all(0 < x < 20 for x in s["losses"]) for s in (short, long))


def test_provenance_names_the_machine_and_the_command(tiny_record):
    origin = tiny_record["provenance"]
    assert (origin["device"], origin["gpu"], origin["torch"]) == ("cpu", None, torch.__version__)
    assert "--preset tiny" in origin["command"] and origin["command"].startswith("python -m course.lab.decoder_memory")
    age = datetime.datetime.now(datetime.UTC) - datetime.datetime.fromisoformat(origin["date"])
    assert age < datetime.timedelta(hours=1)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_closed_form_psi_is_the_module_s_parameter_count(name):
    spec = PRESETS[name]
    model = Decoder(spec, device=torch.device("meta"))
    assert sum(p.numel() for p in model.parameters()) == spec.psi
    if name == "1.3b":
        assert 1e9 <= spec.psi <= 2e9


def test_a_file_missing_a_field_is_refused_with_its_path(tiny_record, tmp_path):
    broken = json.loads(json.dumps(tiny_record))
    del broken["provenance"]["driver"]
    path = tmp_path / "gpu_memory.json"
    path.write_text(json.dumps(broken), "utf-8")
    with pytest.raises(CourseError, match=r"gpu_memory\.json.*at provenance: 'driver' is a required property"):
        read_record(path)


def test_asking_for_a_gpu_where_there_is_none_is_a_clear_error(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert main(["--preset", "tiny", "--out", str(tmp_path / "x.json")]) == 2
    assert "--device cuda: no GPU visible" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
