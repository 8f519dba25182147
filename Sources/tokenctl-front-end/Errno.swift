import CLinux

/// `errno`, as the Glibc module has it, for the sources this Embedded Swift module shares
/// with AgentWire, SocketIO and AgentFrontEnd (Package.swift): the C macro is not
/// importable.
var errno: Int32 {
  get { __errno_location().pointee }
  set { __errno_location().pointee = newValue }
}
