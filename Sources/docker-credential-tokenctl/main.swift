import TokenCtlCLI

// Docker, Podman and skopeo run `docker-credential-tokenctl get|list|store|erase` for a
// registry whose `credHelpers` entry is `tokenctl`; this is `tokenctl docker-credential …`
// under the name they look for.
TokenCtl.runAsProcess(prefix: ["docker-credential"], name: "docker-credential-tokenctl")
