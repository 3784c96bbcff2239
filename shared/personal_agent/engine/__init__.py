"""The run engine: one implementation over pydantic-ai, used by the inline and the durable drivers."""
