#if canImport(Glibc)
  import Glibc
#else
  import CLinux  // Embedded Swift (the front end) has no Glibc module.
#endif

// read(2) and write(2) under names of their own, for types with members of those names,
// in which the bare names are the members'. A normal build could say `Glibc.read`; the
// front end is built as Embedded Swift, which has no Glibc module (Package.swift).

func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(fd, buffer, count)
}

func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  write(fd, buffer, count)
}
