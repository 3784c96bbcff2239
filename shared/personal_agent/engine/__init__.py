"""The run engine: one implementation over pydantic-ai, used by the inline and the durable drivers.

`runner` (advance a run; end one nobody advances), `drive` (the model step and the tool step, checkpoints),
`deferred` (pausing for approvals), `finish` (the end of a run), `failures` (RUN_ERROR codes), `agent_factory`,
`agui` (native events to AG-UI), `emitter`, `cancellation`, `usage`. It uses stores, never a service or a driver.
"""
