#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TaskLogCLI

exit(CommandLineTool.main(CommandLine.arguments, http: nil))
