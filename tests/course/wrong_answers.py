"""A deliberately wrong answer file per exercise of the course, each a mistake a learner could
make (`tests/course/test_course_check.py` checks that `fxoracle course check` calls every one
wrong and names a wrong fact)."""

WRONG = {
    # 0.0 == -0.0 in Python, but the key keeps the sign
    "01.1": 'EQUAL_KEYS = {"0.0/-0.0", "torch.float32/torch.float"}',
    "01.2": "LIVE_SAME_KEY = True\nOFFLINE_SAME_KEY = True",
    "01.3": 'DIFFERING_FIELD = "call_site"',
    # the refused candidate stays: the learner did not see the queues misalign
    "02.1": 'STEP_2 = ("cos", "cos_1")\n'
    'STEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE = ("cos", "cos_1")\nWHAT_GOES_WRONG = "nothing"',
    # two independent regions: safe alone and together
    "02.2": """
import torch
import torch.fx


def build() -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x0, x1 = g.placeholder("x0"), g.placeholder("x1")
    a0, a1 = g.call_function(torch.sin, (x0,)), g.call_function(torch.sin, (x1,))
    g.output((g.call_function(torch.add, (a0, 1)), g.call_function(torch.add, (a1, 1))))
    return torch.fx.GraphModule(torch.nn.Module(), g)
""",
    # torch's answer: one placeholder per node of region 0
    "03.1": "PLACEHOLDERS = 1\nREPLACED = [0, 1]\nREFUSED = {}\nSAME_RESULT = True",
    "03.2": "SECOND_RUN_REPLACES = 3\nCODE_CHANGES = False",
    "03.3": 'REGIONS = [["sin", "cos"], ["sin_1", "cos_1"]]\nINSTALLED = ["subgraph_0"]\n'
    'REFUSAL = "RPL-5"',
    # each read after its last mutator only: misses the direct users before mul_
    "04.1": 'EXTRA = {"a": [], "add_": ["a"], "b": ["add_"], "mul_": ["b"], "c": ["mul_"]}',
    "04.2": 'TORCH_DEPS_OF_INV = ["add_"]\nINHERITED_DEPS_OF_INV = ["add_"]\n'
    'TORCH_ORDER = ["x", "before", "add_", "inv", "out", "output"]\n'
    'INHERITED_ORDER = ["x", "before", "add_", "inv", "out", "output"]',
    # the scrambled order of the worked example, and the cycle from the wrong end
    "04.3": 'CYCLE = ["out", "before", "out"]\n'
    'ORDER_AFTER = ["x", "out", "after", "add_", "before", "output"]',
    "05.1": "REFERENCE_ORDER = [0, 1, 2, 3, 4]\nTORCH_ORDER = [3, 1, 0, 2, 4]",
    "05.2": 'INPUTS = {0: ["x"], 1: ["a"]}\nOUTPUTS = {0: ["a"], 1: ["total"]}\n'
    "PRELUDES = {0: [], 1: []}\nTOTAL_REQUIRES_GRAD = True",
    "05.3": "REFUSED = False\nORDER_WITHOUT_GRAD_NODES = [0, 1]",
    # the tolerance story: the constant is thought to reach the multiply unrounded
    "06.1": 'VIOLATED = {"CHK-3"}\nFLOAT32_CONSTANT = 1.5000000015\n'
    'LARGEST_OUTPUT_DIFFERENCE = 2.2e-9\nCHK6_HOLDS_BECAUSE = "tolerance"\n'
    "ZERO_TOLERANCE_CATCHES_IT = True",
    "06.2": 'VIOLATED = {"CHK-6"}\nUNKNOWN = set()\nOK = False',
    "06.3": 'VIOLATED = {"CHK-2"}\nCYCLE = ["mul_2", "invoke_subgraph", "getitem", "mul_2"]',
    "06.4": 'CHK4 = "violated"\nFIRST_PARTITION_NODES = ["t"]',
    # an even size, where the two sides agree
    "07.1": "NESTED_HOLDS = True\nS0 = 4\nZ3_SAME_SIZE = True",
    "07.2": 'FLOORDIV_7_BY_MINUS_2 = -3\nMOD_1_BY_MINUS_2 = 1\nAT_B_ZERO = "Holds"',
    "07.3": "from checker.proof.shapes import ShapeFacts, SymbolRange\n\n"
    'FACTS = ShapeFacts(ranges=(SymbolRange("s0", 3, 5),))\nVERDICT = "Violated"\n'
    'DIFFERENT_LENGTHS = "Violated"',
    "08.1": 'COMPARED = {"tracker", "dedup", "sort", "split"}\nSKIPPED = set()\nFAILS = True',
    # a sort that erases nothing: no planted bug at all
    "08.2": """
from reference.sort.stable import stable_topological_sort


class DropsDeadNodes:
    def stable_sort(self, graph, deps):
        stable_topological_sort(graph, deps)


KIND = "contract"
DEAD = {"add_"}
""",
    "08.3": "UPDATE_MOVED_SAME_MEANING = True\nINDEPENDENT_SWAPPED_SAME_MEANING = True",
    "09.1": 'SHARE_H_STORAGE = {"h", "v", "s", "add_"}\nSRT12_ONLY = {"y after add_"}',
    "09.2": "Z_FOLLOWS_MUL_ = False",
    # every argument counted (constants too), kwargs not: add_ 0, setitem 0, add has no place
    "11.1": 'ADD_INPLACE = [0]\nSETITEM = [0]\nADD_OUT = [3]\nWRITTEN = ["l_x_", "l_y_", "c"]',
}
