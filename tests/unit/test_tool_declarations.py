"""A tool is declared once (`tools/registry.py`: name, function, description, flags): the engine builds the
first-party tools from those declarations alone, and every function of `tools/first_party.py` is one of them."""

from __future__ import annotations

import inspect

from personal_agent.tools import first_party
from personal_agent.tools.registry import first_party_names, get_tool
from personal_agent.tools.toolset import pydantic_tool


def test_each_first_party_tool_is_built_from_its_one_declaration() -> None:
    names = first_party_names()
    assert {"current_time", "calculate", "web_fetch", "remember", "delegate", "search_knowledge"} <= set(names)
    for name in names:
        tool = get_tool(name)
        if tool is None:  # not offered in this deployment (its setting is unset)
            continue
        function = tool.implementation()
        assert function.__name__ == name and function.__module__ == tool.function
        built = pydantic_tool(tool)
        assert (built.name, built.description, built.function) == (name, tool.description, function)


def test_every_function_of_first_party_is_a_declared_tool() -> None:
    functions = {
        name
        for name, value in vars(first_party).items()
        if inspect.isfunction(value) and value.__module__ == first_party.__name__ and not name.startswith("_")
    }
    assert functions <= set(first_party_names())
