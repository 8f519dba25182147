import NativeAppSupport

/// Whether libcurl, the HTTP transport of every sign-in and refresh, can be opened as
/// the transport opens it (by its soname, on the first request).
enum LibcurlCheck {
  static func check() -> DoctorCheck {
    guard let problem = CurlHTTPTransport.loadLibrary() else {
      return .ok("libcurl", "libcurl", "loaded (libcurl.so.4)")
    }
    return .fail(
      "libcurl", "libcurl", "cannot load libcurl, through which tokenctl signs in and refreshes (\(problem))",
      fix: "Install it: `sudo apt install libcurl4`.")
  }
}
