"""What the client can do, resolved once at ``initialize`` into one frozen record the features read.

The client's capabilities are a deep tree of optional fields; reading them where each feature needs them
spread the same None checks over five modules. :meth:`ClientSupport.of` reads every one the server uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol.types import ClientCapabilities, ClientInfo, MarkupKind

# Clients that implement Faultline's client-side commands without saying so (the VS Code extension and forks).
VSCODE_CLIENT_NAMES = ("Visual Studio Code", "VSCodium", "Code - OSS", "Cursor", "Windsurf")
RUN_VERIFICATION = "faultline.runVerification"  # client side: confirm, then run in a terminal
COPY_TEXT = "faultline.copyText"  # client side: copy to the clipboard


@dataclass(frozen=True)
class ClientSupport:
    """The capabilities and client-side commands of the connected client (all off before ``initialize``)."""

    markdown_hover: bool = False
    code_description: bool = False  # diagnostics may link their code to a document
    disabled_code_actions: bool = False
    document_changes: bool = False  # workspace edits may carry versioned document changes
    apply_edit: bool = False
    configuration_pull: bool = False
    show_document: bool = False
    work_done_progress: bool = False
    watch_files: bool = False  # the client registers file watchers dynamically
    relative_watch_patterns: bool = False
    commands: frozenset[str] = frozenset()  # client-side commands it implements

    @classmethod
    def of(cls, capabilities: ClientCapabilities, client_info: ClientInfo | None,
           initialization_options: object) -> ClientSupport:
        text_document, window, workspace = capabilities.text_document, capabilities.window, capabilities.workspace
        hover = text_document.hover if text_document is not None else None
        publish = text_document.publish_diagnostics if text_document is not None else None
        code_action = text_document.code_action if text_document is not None else None
        edit = workspace.workspace_edit if workspace is not None else None
        watched = workspace.did_change_watched_files if workspace is not None else None
        return cls(
            markdown_hover=bool(hover is not None and hover.content_format
                                and MarkupKind.Markdown in hover.content_format),
            code_description=bool(publish is not None and publish.code_description_support),
            disabled_code_actions=bool(code_action is not None and code_action.disabled_support),
            document_changes=bool(edit is not None and edit.document_changes),
            apply_edit=bool(workspace is not None and workspace.apply_edit),
            configuration_pull=bool(workspace is not None and workspace.configuration),
            show_document=bool(window is not None and window.show_document is not None
                               and window.show_document.support),
            work_done_progress=bool(window is not None and window.work_done_progress),
            watch_files=bool(watched is not None and watched.dynamic_registration),
            relative_watch_patterns=bool(watched is not None and watched.relative_pattern_support),
            commands=_client_commands(initialization_options, client_info),
        )


def _client_commands(options: object, client_info: ClientInfo | None) -> frozenset[str]:
    """The ``clientCommands`` the editor declared, else the ones VS Code and its forks implement."""
    if isinstance(options, dict) and isinstance(options.get("clientCommands"), list):
        return frozenset(c for c in options["clientCommands"] if isinstance(c, str))
    name = client_info.name if client_info is not None else ""
    if any(name.startswith(known) for known in VSCODE_CLIENT_NAMES):
        return frozenset({RUN_VERIFICATION, COPY_TEXT})
    return frozenset()
