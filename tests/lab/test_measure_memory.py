"""State bytes come from the distinct storages behind live tensors, never twice for a view."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from course.lab.measure_memory import inventory, optimizer_state_groups  # noqa: E402

pytestmark = pytest.mark.torch


def test_views_of_one_flat_buffer_count_once():
    flat = torch.zeros(12, dtype=torch.bfloat16)
    weight, bias = flat[:8].view(2, 4), flat[8:10]
    assert inventory({"parameters": [weight, bias]})["parameters"] == 24


def test_a_storage_counts_in_the_first_category_that_names_it():
    params = torch.zeros(10)
    grads = torch.zeros(5, dtype=torch.bfloat16)
    totals = inventory({"parameters": [params], "gradients": [grads, params[:3]], "held": [torch.zeros(2)]})
    assert totals == {"parameters": 40, "gradients": 10, "optimizer": 0, "optimizer_scalars": 0, "held": 8}


def test_missing_gradients_are_skipped():
    assert inventory({"gradients": [None, torch.zeros(3)]})["gradients"] == 12


def test_unknown_category_is_refused():
    with pytest.raises(ValueError, match=r"unknown memory categories \['activations'\]"):
        inventory({"activations": [torch.zeros(1)]})


def test_adam_state_splits_moments_from_step_counters():
    p = torch.nn.Parameter(torch.zeros(7))
    opt = torch.optim.Adam([p])
    p.grad = torch.ones(7)
    opt.step()
    groups = optimizer_state_groups(opt.state)
    assert inventory(groups) == {"parameters": 0, "gradients": 0, "optimizer": 56, "optimizer_scalars": 4, "held": 0}


def test_cpu_ranks_have_no_allocator_to_read():
    from course.lab.measure_memory import allocator_reader

    assert allocator_reader(torch.device("cpu")) is None


def test_a_snapshot_carries_the_allocator_reading_beside_the_count():
    from course.lab.measure_steps import snapshot

    class Holder:
        def resident(self):
            return {"parameters": [torch.zeros(10, dtype=torch.bfloat16)]}

        def held(self):
            return []

    assert snapshot(Holder()) == {
        "parameters": 20,
        "gradients": 0,
        "optimizer": 0,
        "optimizer_scalars": 0,
        "held": 0,
        "gradient_tensors": 0,
    }
    assert snapshot(Holder(), allocated=lambda: 512)["allocator"] == 512


def test_a_snapshot_counts_the_gradients_that_exist_so_a_dropped_gradient_is_seen():
    """zero_grad() sets gradients to None: the snapshot says how many gradient tensors remain, not only their bytes."""
    from course.lab.measure_steps import snapshot

    class Dropped:
        def resident(self):
            return {"parameters": [torch.zeros(4), torch.zeros(2)], "gradients": [None, torch.zeros(2)]}

        def held(self):
            return []

    counted = snapshot(Dropped())
    assert counted["gradient_tensors"] == 1 and counted["gradients"] == 8
