import TokenCtlCLI

// Only the entry point lives here; everything else is in TokenCtlCLI, where tests reach it.
TokenCtl.runAsProcess(name: "tokenctl")
