"""The offline demo model's `/tool NAME {json args}` command, parsed."""

from __future__ import annotations

from personal_agent.models.demo import parse_tool_command


def test_a_tool_command_names_the_tool_and_its_args() -> None:
    assert parse_tool_command('/tool demo_weather {"city": "Oslo"}') == ("demo_weather", {"city": "Oslo"})
    assert parse_tool_command("  /tool current_time  ") == ("current_time", {})


def test_other_text_is_not_a_tool_command() -> None:
    assert parse_tool_command("what time is it?") is None
    assert parse_tool_command("/toolbox x") is None


def test_a_malformed_tool_command_says_why() -> None:
    assert "Usage" in str(parse_tool_command("/tool"))
    assert "not valid JSON" in str(parse_tool_command("/tool calc {oops"))
    assert "JSON object" in str(parse_tool_command("/tool calc [1, 2]"))


def test_the_notes_of_a_messages_attachments_follow_the_args() -> None:
    command = '/tool run_python {"files": ["a.csv"]} [The user attached the file \'a.csv\'; run_python reads it.]'
    assert parse_tool_command(command) == ("run_python", {"files": ["a.csv"]})
