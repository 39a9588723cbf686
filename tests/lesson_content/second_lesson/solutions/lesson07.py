def split_layers(num_layers: int, stages: int) -> tuple:
    """每个阶段的层数；除不尽时靠前的阶段各多一层。"""
    base, extra = divmod(num_layers, stages)
    return tuple(base + (1 if s < extra else 0) for s in range(stages))


def describe_split(num_layers: int, stages: int) -> dict:
    """切分的摘要：阶段数、最多与最少的层数。"""
    counts = split_layers(num_layers, stages)
    return {"stages": stages, "max": max(counts), "min": min(counts)}
