import AgentFrontEnd
import TokenCtlCLI

// Docker, Podman and skopeo run `docker-credential-tokenctl get|list|store|erase` for a
// registry whose `credHelpers` entry is `tokenctl`; this is `tokenctl docker-credential …`
// under the name they look for.
TokenCtl.runAsProcess(
  prefix: FrontEnd.prefix(forProgram: "docker-credential-tokenctl"), name: "docker-credential-tokenctl")
