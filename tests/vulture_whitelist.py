"""What vulture cannot see being used (read by `tests/unit/test_dead_code.py`, never imported): names a library
calls."""
# ruff: noqa

# pydantic-ai calls a capability's hooks, a toolset's and an embedding model's members by name.
_.get_serialization_name  # AttachmentContent, ContextFit
_.before_model_request  # AttachmentContent, ContextFit
_.get_tools  # McpServerToolset
_.get_model_settings  # CallerToolChoice (engine/tool_choice.py)
_.system  # WordLlamaEmbeddingModel
_.max_input_tokens  # WordLlamaEmbeddingModel
# Starlette's router asks every route for a URL by name (fastpaths.lazy_routers._StandIn).
_.url_path_for
# html.parser.HTMLParser calls its handlers (with every argument) by name.
_.handle_starttag
_.handle_endtag
_.handle_data
_.attrs
# The Lambda context and invoke signature the handlers are given (local/aws.py).
_.invoked_function_arn
_.qualifier
# The tool registry imports each first-party tool's function by the tool's name (`ToolDef.implementation`).
_.current_time
_.send_demo_message
_.web_fetch
_.web_search
_.remember
_.ask_user
# a2a-sdk's JSON-RPC dispatcher calls the request handler's methods by name (a2a/handler.py).
_.on_message_send
_.on_message_send_stream
_.on_get_task
_.on_cancel_task
_.on_list_tasks
_.on_subscribe_to_task
_.on_create_task_push_notification_config
_.on_get_task_push_notification_config
_.on_list_task_push_notification_configs
_.on_delete_task_push_notification_config
_.on_get_extended_agent_card
# The knowledge parsers are looked up by name per format (knowledge/parsing/__init__.py PARSERS).
_.parse_pdf
_.parse_docx
_.parse_csv
_.parse_xlsx
_.parse_pptx
_.parse_eml
_.parse_image
# io.TextIOBase's protocol: print() asks a stream whether it is writable (sandbox/kernel.py's capped output).
_.writable
# pydantic-ai calls a capability's hook by name after a tool call's arguments validate (engine/tool_review.py).
_.after_tool_validate
# ... and before a validated call runs (engine/search_rewrite.py).
_.before_tool_execute
# aiosmtpd calls its handler's DATA hook by name (local/smtp_inbound.py).
_.handle_DATA
# Textual calls an app's and a screen's handlers and actions by name (terminal/chat_app.py).
_.compose
_.on_mount
_.on_input_submitted
_.action_interrupt
