import TaskInterchange

/// `tasklog.1`, the manual page, written from the command table (`tasklog __manpage`).
enum ManPage {
    static var text: String {
        var out = """
            .TH TASKLOG 1 "" "tasklog 0.1.0" "User Commands"
            .SH NAME
            tasklog \\- a task list kept as a per-device operation log that syncs without a server
            .SH SYNOPSIS
            .B tasklog
            [\\-\\-store DIR] COMMAND [OPTIONS]
            .SH DESCRIPTION
            Each device appends to its own compressed operation log; logs merge with CRDTs, so devices
            that exchange them through a shared folder or an HTTP peer show the same tasks.
            IDs may be given as any unique prefix of 4 or more characters.
            .SH COMMANDS

            """
        for command in Commands.all {
            out += ".SS \(escaped(command.name))\n"
            for form in command.forms {
                out += ".TP\n.B tasklog \(escaped(form.usage))\n\(escaped(form.summary)).\n"
            }
            for option in command.options {
                out += ".TP\n.BR \\-\\-\(escaped(option.name))\(option.value.map { " \" \($0)\"" } ?? "")\n"
                out += escaped(option.help) + (option.repeats ? " (may repeat)" : "") + ".\n"
            }
            for paragraph in command.details { out += ".PP\n\(escaped(paragraph))\n" }
        }
        out += """
            .SH ENVIRONMENT
            .TP
            .B TASKLOG_STORE
            The store folder when \\-\\-store is not given (else $XDG_DATA_HOME/tasklog, else ~/.local/share/tasklog).
            .TP
            .B TASKLOG_TOKEN
            The HTTP peer's token.
            .TP
            .B TASKLOG_PASSPHRASE
            An encrypted folder's passphrase.
            .TP
            .B TASKLOG_CALDAV_PASSWORD
            The password for sync caldav://.
            .TP
            .B TZ
            The time zone dates are read and shown in.
            .TP
            .B NO_COLOR
            When set, output is never coloured.
            .SH EXIT STATUS
            0 on success, 2 on a usage error, 1 on any other failure.
            .SH SEE ALSO
            The specification in the Spec folder of the source: log-format.md, crdt.md, sync-folder.md,
            sync-http.md, encryption.md, interop.md and cli.md.

            """
        return out
    }

    /// Text made safe for roff: backslashes, dashes, and a leading dot or quote.
    static func escaped(_ s: String) -> String {
        var out = s.replacingAll("\\", "\\e").replacingAll("-", "\\-")
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}
