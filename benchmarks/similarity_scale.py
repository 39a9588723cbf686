"""Time `course similarity` on synthetic classes of 40, 400 and 1,000 submissions: no all-pairs blow-up.

    .venv/bin/python benchmarks/similarity_scale.py [--sizes 40 400 1000]

Each class is lesson05's released notebook handed in by synthetic students (tests/similarity/planted_class.py
writes the folders): random but topical Chinese answers to Q1–Q3 drawn from a vocabulary, a few wrong blanks,
some helper code, and one copied pair per 20 students. Prints per size the time to read the submissions
(collect) and to find and rank the pairs (find_pairs), and how many planted pairs were found.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.assignment.make_submissions import CORRECT, NO_EXTRA  # noqa: E402
from tests.similarity.planted_class import HELPER, write_class  # noqa: E402

WORDS = (
    "参数 梯度 优化器 状态 激活 分片 通信 显存 冗余 副本 重计算 序列 并行 规约 收集 预取 延迟 计算 重叠 "
    "每卡 数据 模型 训练 反向 前向 带宽 规模 瓶颈 不变 减少 因为 所以 但是 如果 可以 需要 总量 一半 两倍 "
    "环形 拆成 两步 更新 保存 丢弃 加载 提前 隐藏 失效 正交 叠加 切开 局部 全局 批量 样本 时间"
).split()


def synthetic_class(n: int, seed: int = 0) -> tuple[dict, set]:
    """N students (fills, helper code, answers) and the planted copied pairs among them."""
    rng = random.Random(seed)
    students, planted = {}, set()
    for i in range(n):
        name = f"s{i:04d}"
        if i % 20 == 1:  # a copy of the previous student, one Q answer a little edited
            fills, code, answers = students[f"s{i - 1:04d}"]
            answers = {**answers, "Q2": answers["Q2"].replace("因为", "由于", 1)}
            planted.add((f"s{i - 1:04d}", name))
        else:
            fills = NO_EXTRA if rng.random() < 0.2 else CORRECT
            code = HELPER.replace("rows", f"rows{i}") if rng.random() < 0.1 else ""
            answers = {
                q: "".join(rng.choice(WORDS) for _ in range(rng.randint(20, 40))) + "。" for q in ("Q1", "Q2", "Q3")
            }
        students[name] = (fills, code, answers)
    return students, planted


def main() -> int:
    """Build each class, time collect and find_pairs, print the numbers."""
    from course.similarity.collect import collect
    from course.similarity.find_pairs import find_pairs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[40, 400, 1000])
    args = parser.parse_args()
    print(f"{'students':>8} {'collect s':>10} {'find_pairs s':>13} {'pairs':>6} {'planted found':>14}")
    for n in args.sizes:
        students, planted = synthetic_class(n)
        with tempfile.TemporaryDirectory() as tmp:
            project = write_class(Path(tmp), students)
            start = time.perf_counter()
            work = collect(project, "lesson05")
            read = time.perf_counter() - start
            start = time.perf_counter()
            pairs = find_pairs(work)
            ranked = time.perf_counter() - start
        found = len({(p.a, p.b) for p in pairs} & planted)
        print(f"{n:>8} {read:>10.2f} {ranked:>13.3f} {len(pairs):>6} {found:>7}/{len(planted)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
