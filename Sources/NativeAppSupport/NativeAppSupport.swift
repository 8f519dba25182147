// The Linux side of a native OAuth app (RFC 8252): see the files beside this one.
