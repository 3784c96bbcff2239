"""The `calculate` tool's evaluator: arithmetic over an AST, bounded in size so no input can run long.

Input it refuses raises pydantic-ai's `ModelRetry`, with a message that tells the model what to fix.

Every intermediate result is checked (integers at most `MAX_INT_BITS` bits, floats finite) and a power is
refused *before* it is computed when its result would be larger, so `(9**99)**99` or `1**1**…` nested 167 deep
are refused at once instead of building huge integers or recursing exponentially.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from pydantic_ai import ModelRetry

MAX_EXPRESSION_CHARS = 500
MAX_INT_BITS = 4096  # about 1,233 decimal digits


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _checked(value: Any) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        raise ModelRetry("the result is too large")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ModelRetry(f"the result has more than {MAX_INT_BITS} bits")
    return value  # type: ignore[no-any-return]


def _power(base: int | float, exponent: int | float) -> int | float:
    magnitude = abs(base)
    if magnitude > 1 and exponent > 0:
        # log2 of the result, estimated before computing it.
        bits = exponent * math.log2(magnitude)
        floating = isinstance(base, float) or isinstance(exponent, float)
        if bits > MAX_INT_BITS or (floating and bits > 1023):
            raise ModelRetry("the result is too large")
    if isinstance(exponent, int) and exponent < 0 and base == 0:
        raise ModelRetry("zero cannot be raised to a negative power")
    result = base**exponent
    if isinstance(result, complex):
        raise ModelRetry("the result is not a real number")
    return result


def _evaluate(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _checked(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left), _evaluate(node.right)  # each subtree exactly once
        if isinstance(node.op, ast.Pow):
            return _checked(_power(left, right))
        if type(node.op) in _BINARY:
            try:
                return _checked(_BINARY[type(node.op)](left, right))
            except ZeroDivisionError:
                raise ModelRetry("division by zero") from None
    raise ModelRetry("only numbers, + - * / // % ** and parentheses are allowed")


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression (numbers, + - * / // % ** and parentheses)."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ModelRetry(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        return str(_evaluate(tree.body))
    except SyntaxError:
        raise ModelRetry("the expression is not valid arithmetic") from None
    except (RecursionError, MemoryError, OverflowError):
        raise ModelRetry("the expression is too large or too deeply nested") from None
