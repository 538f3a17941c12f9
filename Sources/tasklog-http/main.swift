#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TaskLogCLI

// `tasklog serve` and `tasklog sync http(s)://…` land here (tasklog hands them over).
exit(CommandLineTool.main(CommandLine.arguments, http: HTTPCommandSet()))
