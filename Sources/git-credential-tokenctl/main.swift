import AgentFrontEnd
import TokenCtlCLI

// git runs `git-credential-tokenctl get|store|erase` for `credential.helper=tokenctl`; this
// is `tokenctl credential …` under the name git looks for.
TokenCtl.runAsProcess(prefix: FrontEnd.prefix(forProgram: "git-credential-tokenctl"), name: "git-credential-tokenctl")
