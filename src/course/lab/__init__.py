"""The ZeRO lab: measure ZeRO-0/1/2/3 memory and communication on torch.distributed ranks (`course lab`).

Everything that trains needs the lab extra (torch); `formulas`, `report_file` and `lesson_view` do not.
"""
