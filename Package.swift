// swift-tools-version:6.2
import PackageDescription

// Dependencies are chosen for startup time as much as for features: `tokenctl token`
// must start as fast as `secret-tool lookup`, so nothing on that path pulls in an HTTP
// stack or Foundation's ICU-backed internationalization.
//
// - swift-argument-parser: the command line, `--help`, and the man pages generated from
//   the same definitions (its GenerateManual plugin). It imports only FoundationEssentials.
// - swift-crypto: SHA-256 for PKCE (RFC 7636) and the signature checks of ID tokens
//   (RS256/PS256 through CryptoExtras, ES256/ES384), on BoringSSL, as Apple's CryptoKit
//   API. The alternative, libgcrypt or OpenSSL through C, would mean hand-written key
//   parsing and memory handling in the core.
// - libcurl (Debian's, opened with dlopen) is the HTTP transport; libsecret (Debian's, also
//   opened with dlopen) the keyring. Neither is a Swift package.

/// The front end's link: static; and static-pie (its address space randomized as the full
/// program's is, for a few relocations at start) where the build asks for it
/// with `TOKENCTL_STATIC_PIE=1`, as `make`'s release build does: glibc's static-pie start
/// asserts that the executable has no run path, and only a build with
/// `--disable-local-rpath` (RELEASE_FLAGS) has none. lld: gold has no static-pie.
let frontEndLinkFlags =
  ["-static-executable", "-use-ld=lld"]
  + (Context.environment["TOKENCTL_STATIC_PIE"] == "1" ? ["-Xclang-linker", "-static-pie"] : [])

let package = Package(
  name: "tokenctl",
  products: [
    .executable(name: "tokenctl", targets: ["tokenctl"]),
    .executable(name: "git-credential-tokenctl", targets: ["git-credential-tokenctl"]),
    .executable(name: "docker-credential-tokenctl", targets: ["docker-credential-tokenctl"]),
    // What users run under the three names above once installed (`make install`): the
    // front end, which answers from the agent and hands the rest to the full program.
    .executable(name: "tokenctl-front-end", targets: ["tokenctl-front-end"]),
    // The resident agent, which `tokenctl agent run` runs: the agent without the commands.
    .executable(name: "tokenctl-agent", targets: ["tokenctl-agent"]),
    // What an app needs to sign in and keep accounts as tokenctl does, and share them with it
    // (Examples/README.md): the core, the keyring store, the native-app support, and each
    // account type. One product per account type, named as its target, so that an app
    // links only the providers it serves (the walkthrough's app: Graph alone).
    .library(name: "TokenKit", targets: ["TokenKit"]),
    .library(name: "SecretServiceStore", targets: ["SecretServiceStore"]),
    .library(name: "NativeAppSupport", targets: ["NativeAppSupport"]),
    .library(name: "OpenIDConnectAccount", targets: ["OpenIDConnectAccount"]),
    .library(name: "MicrosoftGraphAccount", targets: ["MicrosoftGraphAccount"]),
    .library(name: "GitHubAccount", targets: ["GitHubAccount"]),
    .library(name: "GitLabAccount", targets: ["GitLabAccount"]),
    .library(name: "GoogleAccount", targets: ["GoogleAccount"]),
    .library(name: "BitbucketAccount", targets: ["BitbucketAccount"]),
    .library(name: "GiteaAccount", targets: ["GiteaAccount"]),
    .library(name: "TokenStoreTesting", targets: ["TokenStoreTesting"]),
    // For Tests/Fuzz, a package of its own that can only reach products.
    .library(name: "TokenCtlFuzzing", targets: ["TokenCtlFuzzing"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
  ],
  targets: [
    // The core: the OAuth model, the registry, the store protocol. No libsecret, no HTTP,
    // no provider names.
    .target(
      name: "TokenKit",
      dependencies: [
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ]),

    // The Linux side of a native app (RFC 8252): the HTTP transport over libcurl, the
    // loopback redirect listener, the browser launcher, lock files and XDG directories.
    // libcurl is opened with dlopen on the first request, not linked (see
    // Sources/CCurl/include/curl-shim.h): only its headers are needed to build (apt
    // `libcurl4-openssl-dev`), and the shared library at run time (`libcurl4`).
    .target(name: "CCurl"),
    // Linux calls Swift's Glibc module does not offer (accept4, pipe2, closefrom for
    // posix_spawn, prctl): a header of static inline wrappers, no library.
    .target(name: "CLinux"),
    // How work runs in our processes, an app's included: threads (DetachedThread), the
    // executor and the timer that leave an idle process idle (ThreadPoolExecutor,
    // DeadlineTimer), and child processes (ChildProcess, its reaper, the environment a child
    // gets). Below NativeAppSupport, whose transport, redirect receivers, lock waits and
    // browser launcher run on it, so it cannot live in TokenCtlRuntime above it; and out of
    // NativeAppSupport, which holds only what an app asks for. Not a product: an
    // app reaches it only through NativeAppSupport.
    .target(name: "ProcessRuntime", dependencies: ["CLinux"]),
    // XDGRuntime for the one rule of tokenctl's runtime folder, which the front end needs too.
    // Its Files group is the one files layer every target above it uses: the owner-and-mode
    // table (FilePolicy), one reader, one atomic writer, one lock file and one hashed name
    // (SHA-256, hence Crypto).
    .target(
      name: "NativeAppSupport",
      dependencies: [
        "TokenKit", "CCurl", "CLinux", "XDGRuntime", "ProcessRuntime",
        .product(name: "Crypto", package: "swift-crypto"),
      ]),
    // tokenctl's own processes, which no app shares: the refresh child (`_refresh-worker`)
    // with its protocol and report, the test hook that holds a refresh, the user's hook,
    // the terminal, the wall-clock watch and the protection of a process holding tokens.
    // Apart from NativeAppSupport, which is a product for apps and speaks no tokenctl words,
    // and from ProcessRuntime, the machinery under both, so that an app linking
    // NativeAppSupport links none of tokenctl's protocols.
    .target(name: "TokenCtlRuntime", dependencies: ["TokenKit", "NativeAppSupport", "CLinux", "ProcessRuntime"]),

    // The credential helpers' protocols, a folder per tool (Git, Docker, Kube, Cargo): each
    // tool's messages, and how the agent answers its request (`ToolCredentialProtocol`);
    // under them git's, whose URL prefixes and account policy every tool's answer goes
    // through. Apart from the commands, so that the policy is tested as tables and reached
    // without a command line; apart from the core, which holds accounts and tokens and has
    // no use for any of it. Each type's git settings (`GitIntegration`) stay in TokenKit:
    // descriptors carry them.
    .target(name: "CredentialHelpers", dependencies: ["TokenKit"]),

    // A strict reader of the TOML subset our files use, written here rather than taken
    // from a library: every problem is reported with its line:column, and no error ever
    // echoes a value, since the files hold client secrets. It is fuzzed, and bounded in
    // size, depth and time. The available libraries, TOMLKit and swift-toml, both wrap
    // toml++, which would bring C++ into the build.
    .target(name: "TOMLReader"),

    // The files users configure tokenctl with: config.toml (tokenctl-config(5)) and the
    // account type files (tokenctl-types(5)), the owner-and-mode rule for both worded
    // (NativeAppSupport's FilePolicy decides it), and applying the settings to the registry.
    // Kept out of the core, which names no file and reads no TOML, and out of the CLI, so
    // that the readers are tested and fuzzed without the commands; below TokenCtlRuntime,
    // tokenctl's own processes, which read no setting. NativeAppSupport for the XDG directories and user names,
    // CredentialHelpers for the URL prefixes of `[git.accounts]`.
    .target(
      name: "AccountTypeFiles",
      dependencies: ["TokenKit", "TOMLReader", "NativeAppSupport", "CredentialHelpers"]),

    // libsecret, and the GLib, GObject and GIO it stands on, opened with dlopen by the first
    // keyring operation, not linked (see Sources/CLibSecret/include/libsecret-shim.h):
    // linked, they and libgcrypt were loaded into every process at start-up, `--version`
    // and the agent's clients included. No build-time package: the target declares the
    // types it uses itself, since a pkg-config module would link the libraries again. At
    // run time Debian's `libsecret-1-0`.
    .target(name: "CLibSecret"),
    // The one GLib layer: the keyring's reads and monitor and the agent's D-Bus front end
    // each had their own loop threads, GVariant conversions, session bus calls and signal
    // subscriptions, which had drifted apart (the agent's stop could be lost before its
    // loop ran). Internal: not a product, since no app needs GLib from us.
    .target(name: "GLibBus", dependencies: ["CLibSecret", "CLinux"]),
    // The Secret Service's reads without GIO: a D-Bus client of our own that connects,
    // authenticates and makes method calls, and nothing more (no signals, no objects, no
    // main loop), and the store's reads on it. A process that only reads the keyring
    // (`tokenctl token`, git's `get`) spent more on loading GIO, its ten libraries and
    // GDBus's threads than on the calls (the figures: docs/performance.md).
    // Only the ordinary read is made here; anything else (locked items, prompts, errors,
    // writes, signals) stays GDBus's and libsecret's, which a hand-written client would get
    // wrong, so its wording stays in one place. Nothing but Glibc and SocketIO.
    .target(name: "SecretServiceWire", dependencies: ["SocketIO"]),
    // The keyring store, and the monitor that tells a long-lived process when the keyring
    // changed behind its back.
    .target(name: "SecretServiceStore", dependencies: ["TokenKit", "CLibSecret", "GLibBus", "SecretServiceWire"]),
    // The agent's D-Bus object (org.tokenctl.Agent1) and desktop notifications, on GDBus:
    // the GLib that libsecret loads anyway, so no D-Bus library of our own and none linked.
    // ApplicationConsent to tell which application a caller is.
    .target(
      name: "AgentBus",
      dependencies: ["CLibSecret", "GLibBus", "NativeAppSupport", "ApplicationConsent", "TokenKit", "ProcessRuntime"]),

    // An in-memory store and the conformance suite every `TokenStore` must pass.
    .target(name: "TokenStoreTesting", dependencies: ["TokenKit"]),

    // Account types. Each is an ordinary library; the CLI lists them in `BuiltinPlugins`.
    .target(name: "OpenIDConnectAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/OpenIDConnect"),
    .target(name: "MicrosoftGraphAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/MicrosoftGraph"),
    .target(name: "GitHubAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/GitHub"),
    .target(name: "GitLabAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/GitLab"),
    .target(name: "GoogleAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/Google"),
    .target(name: "BitbucketAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/Bitbucket"),
    .target(name: "GiteaAccount", dependencies: ["TokenKit"], path: "Plugins/Accounts/Gitea"),

    // Waiting on and writing to a socket within a deadline, with poll: the one
    // implementation under the agent's protocol and the keyring's reads without GIO.
    // Nothing but Glibc.
    .target(name: "SocketIO"),  // In Embedded Swift's subset too: the front end builds it.
    // Where tokenctl's runtime folder is: the one rule under the agent's socket and the
    // native-app support's folders. In Embedded Swift's subset too: the front end builds it.
    .target(name: "XDGRuntime"),
    // The agent's wire protocol (tokenctl-agent(1)): framed `key=value` messages, read by
    // a loop over bytes so that a client's fast path needs no Codable or JSON machinery,
    // and where the socket is. Nothing but Glibc, and Embedded Swift's subset: the front end
    // builds its sources again as Embedded Swift (tokenctl-front-end below).
    .target(name: "AgentWire", dependencies: ["CLinux", "SocketIO", "XDGRuntime"]),
    // The messages that carry the core's values (errors, account records), on the wire.
    // Apart from the agent, so that clients, tests and the fuzzer reach it without it.
    .target(name: "AgentProtocol", dependencies: ["AgentWire", "TokenKit"]),
    // The client's side of the agent that the front end and the full program share: which
    // command lines it takes, how it asks, and what the front end hands over. No core, no
    // Foundation: it is most of the front end, which builds its sources again as Embedded
    // Swift (tokenctl-front-end below), so they keep to that subset.
    .target(name: "AgentFrontEnd", dependencies: ["AgentWire", "CLinux"]),
    // Per-application consent: the grants file, the audit log, what names an
    // application and which application a peer process is (PeerApplication, with the one
    // rule for tokenctl's own programs, OwnExecutables), shared by the agent, which checks
    // them, the D-Bus front end, which tells its callers, and the commands, which change them.
    .target(name: "ApplicationConsent", dependencies: ["TokenKit", "NativeAppSupport"]),
    // The resident agent (`tokenctl agent`): its socket, its memory of the keyring, and
    // refreshing ahead. Built on the same core and files as the command line, but not on
    // the command line itself; the CLI embeds it, not the other way round.
    .target(
      name: "TokenAgent",
      dependencies: [
        "TokenKit", "AgentProtocol", "NativeAppSupport", "AccountTypeFiles", "CredentialHelpers", "CLinux",
        "AgentBus", "ApplicationConsent", "TokenCtlRuntime", "ProcessRuntime", "SocketIO",
      ]),

    // The account types and the tools' credential protocols tokenctl is built with
    // (BuiltinPlugins), which the command line and the agent's executable both use; the
    // commands reach some plugins' own API too.
    .target(
      name: "BuiltinAccountTypes",
      dependencies: [
        "TokenKit", "CredentialHelpers", "OpenIDConnectAccount", "MicrosoftGraphAccount", "GitHubAccount",
        "GitLabAccount",
        "GoogleAccount", "BitbucketAccount", "GiteaAccount",
      ]),

    .target(
      name: "TokenCtlCLI",
      dependencies: [
        "TokenKit", "AgentProtocol", "AgentFrontEnd", "TokenAgent", "CredentialHelpers", "SecretServiceStore",
        "NativeAppSupport", "AccountTypeFiles", "ApplicationConsent", "TokenCtlRuntime", "ProcessRuntime",
        "BuiltinAccountTypes", "OpenIDConnectAccount", "MicrosoftGraphAccount", "GitHubAccount", "GitLabAccount",
        "GoogleAccount", "BitbucketAccount", "GiteaAccount",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // The agent's systemd unit templates and D-Bus files (make install fills them in), and the release
    // link's order of the functions run at start and its layout of code without a symbol (Makefile,
    // RELEASE_FLAGS), are no sources.
    .executableTarget(
      name: "tokenctl", dependencies: ["TokenCtlCLI"],
      exclude: ["systemd", "dbus", "startup.order", "startup-text.ld"]
    ),
    // The resident agent (`tokenctl agent run` runs it in its place): TokenAgent composed
    // with the keyring, libcurl and the built-in types, and nothing of the command line. A
    // resident process keeps what it maps and touches: in the full program that was the
    // commands, swift-argument-parser and the sign-in too (docs/performance.md, "The
    // agent's memory"). What only the command line does, refresh children and sign-ins,
    // it runs the full program beside it for (SiblingProgram).
    .executableTarget(
      name: "tokenctl-agent",
      dependencies: [
        "TokenAgent", "BuiltinAccountTypes", "SecretServiceStore", "NativeAppSupport", "TokenCtlRuntime",
        "ProcessRuntime", "TokenKit", "AgentProtocol",
      ]),
    // What git runs for `credential.helper=tokenctl`: `tokenctl credential` under git's name.
    .executableTarget(name: "git-credential-tokenctl", dependencies: ["TokenCtlCLI", "AgentFrontEnd"]),
    // What Docker, Podman and skopeo run for `credHelpers` naming `tokenctl`:
    // `tokenctl docker-credential` under the name they look for (`tokenctl setup-docker`).
    .executableTarget(name: "docker-credential-tokenctl", dependencies: ["TokenCtlCLI", "AgentFrontEnd"]),
    // The front end (AgentFrontEnd's `FrontEnd`), linked as a static executable: no dynamic
    // loader, no libstdc++, libm or libgcc_s to bind, so that a client of the agent starts
    // as fast as a small C program (the full program's start was most of a `token` through
    // the agent: docs/performance.md). It never loads a library with dlopen, which a static
    // glibc program cannot do safely: anything that would is the full program's. The full
    // program, which must load libraries, links libstdc++ and libgcc's unwinder statically
    // in release builds instead (Makefile, STATIC_CXX): it binds only libc and libm at start.
    //
    // Built as Embedded Swift, from AgentFrontEnd's, AgentWire's, SocketIO's and XDGRuntime's sources
    // (symbolic links in Sources/tokenctl-front-end), so that the rules stay written once.
    // Why: a static program of full Swift carries the runtime, whose start was most of the
    // front end's: its metadata to relocate, the backtracer's search for swift-backtrace,
    // and CommandLine reading /proc/self/maps. Embedded Swift has no runtime metadata and
    // no runtime to start, so the front end starts as a C program does (the figures:
    // docs/performance.md, "The front end"). The price is Embedded
    // Swift's subset in those three modules (no existentials, key paths or untyped throws),
    // which their normal builds, in every other program and the tests, compile as well.
    // `-wmo`: Embedded Swift compiles a module whole. `-no-static-stdlib`: the release
    // build's --static-swift-stdlib would look for the standard library among the static
    // runtime's, which has no Embedded one.
    .executableTarget(
      name: "tokenctl-front-end", dependencies: ["CLinux"],
      swiftSettings: [.enableExperimentalFeature("Embedded"), .unsafeFlags(["-wmo", "-no-static-stdlib"])],
      linkerSettings: [.unsafeFlags(frontEndLinkFlags)]),

    // The walkthrough's app written against the library, as an app outside this package
    // would write it (Examples/README.md). Declared here, as swift-argument-parser declares
    // its examples, so that every `swift build` builds it at no extra cost (a package of
    // its own would build swift-crypto and all of ours again in CI). It may depend
    // ONLY on targets that are library products above, and on other packages' products:
    // anything else would be something no app can reach (checked at the end of this file).
    .executableTarget(
      name: "graph-search-example",
      dependencies: [
        "TokenKit", "SecretServiceStore", "NativeAppSupport", "MicrosoftGraphAccount",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Examples/GraphSearch"),

    // The bodies of the libFuzzer targets (`make fuzz`, Tests/Fuzz). A library, so that
    // TokenKitTests replays the committed seeds through the same code on every `make test`.
    .target(
      name: "TokenCtlFuzzing",
      dependencies: [
        "TokenKit", "CredentialHelpers", "NativeAppSupport", "TOMLReader", "AccountTypeFiles", "AgentProtocol",
        "SecretServiceWire",
      ],
      path: "Tests/Fuzz/Harness"),

    // What every test target shares, in one place: the test clock, in-memory locks and
    // discovery cache, the scripted transport and browser, the fixtures of a signed ID
    // token, one way to run a child process (`TestProcess`, not Foundation's `Process`),
    // temporary directories, and one error for a test's failed setup. A plain library
    // rather than part of a product: nothing outside this package's tests should use it.
    .target(
      name: "TestSupport",
      dependencies: [
        "TokenKit",
        // The fixtures sign ID tokens with a P-256 key of their own.
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Tests/TestSupport"),

    // The core's tests. The account type plugins are tested in PluginTests, so that these
    // build and run without any provider's code.
    .testTarget(
      name: "TokenKitTests",
      dependencies: [
        "TokenKit", "TokenStoreTesting", "TestSupport", "NativeAppSupport",
        // The account tests apply settings as config.toml gives them.
        "AccountTypeFiles",
        // Replays the fuzz seeds (Tests/Fuzz/Corpus) through the fuzz targets' bodies.
        "TokenCtlFuzzing",
        // The JOSE tests sign tokens with keys of their own.
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ]),
    .testTarget(
      name: "AccountTypeFilesTests",
      dependencies: [
        "TOMLReader", "AccountTypeFiles", "TokenKit",
        // Settings are applied to the built-in types, as the command line registers them.
        "OpenIDConnectAccount", "MicrosoftGraphAccount", "GitHubAccount", "GitLabAccount", "GoogleAccount",
        "BitbucketAccount", "GiteaAccount",
      ]),
    // The account type plugins (Plugins/Accounts), each against its provider's documented
    // answers over a scripted transport.
    .testTarget(
      name: "PluginTests",
      dependencies: [
        "TokenKit", "TokenStoreTesting", "TestSupport", "OpenIDConnectAccount", "MicrosoftGraphAccount",
        "GitHubAccount", "GitLabAccount", "GoogleAccount", "BitbucketAccount", "GiteaAccount",
        // Plugin options arrive as config.toml gives them.
        "AccountTypeFiles",
      ]),
    .testTarget(
      name: "SecretServiceStoreTests",
      dependencies: ["SecretServiceStore", "SecretServiceWire", "GLibBus", "TokenStoreTesting", "TestSupport"]),
    .testTarget(name: "SecretServiceWireTests", dependencies: ["SecretServiceWire"]),
    .testTarget(name: "NativeAppSupportTests", dependencies: ["NativeAppSupport", "TestSupport"]),
    .testTarget(name: "ProcessRuntimeTests", dependencies: ["ProcessRuntime"]),
    .testTarget(
      name: "TokenCtlRuntimeTests", dependencies: ["TokenCtlRuntime", "ProcessRuntime", "TokenKit", "TestSupport"]),
    .testTarget(
      name: "ApplicationConsentTests",
      dependencies: ["ApplicationConsent", "NativeAppSupport", "TokenKit", "TestSupport"]),
    .testTarget(
      name: "CredentialHelpersTests", dependencies: ["CredentialHelpers", "TokenKit", "TokenStoreTesting"]),
    // The agent's parts that need no socket or keyring (its memory of a group), apart
    // from its integration tests in TokenCtlCLITests.
    .testTarget(
      name: "TokenAgentTests",
      dependencies: [
        "TokenAgent", "TokenKit", "TokenStoreTesting",
        // The consent gate's tests use real grant and audit files on the test clock.
        "ApplicationConsent", "NativeAppSupport", "TestSupport",
      ]),
    .testTarget(
      name: "TokenCtlCLITests",
      dependencies: [
        "TokenCtlCLI", "TokenStoreTesting", "TestSupport", "NativeAppSupport", "SecretServiceStore",
        "AccountTypeFiles", "ApplicationConsent", "AgentFrontEnd", "TokenAgent", "TokenCtlRuntime",
        "BuiltinAccountTypes",
        // The git server's log names tokens by SHA-256, which the tests compute too.
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
  ]
)

for target in package.targets where target.type != .system {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .swiftLanguageMode(.v6),
      .enableUpcomingFeature("ExistentialAny"),
      .treatAllWarnings(as: .error),
    ]
}

// An example must build as an app outside this package would: from library products only.
let libraryTargets = Set(package.products.compactMap { $0 as? Product.Library }.flatMap(\.targets))
for target in package.targets where target.path?.hasPrefix("Examples/") == true {
  for dependency in target.dependencies {
    switch dependency {
    case .byNameItem(let name, _), .targetItem(let name, _):
      if !libraryTargets.contains(name) { fatalError("\(target.name) uses \(name), a target no app can use") }
    default: break  // A product, of this package or another.
    }
  }
}
