// swift-tools-version:6.2
import PackageDescription

// The libFuzzer build of tokenctl's parsers: `make fuzz`, through `Tests/Fuzz/run.sh`.
//
// A package of its own, so that the root package's `swift build` never sees an executable
// without `main`: libFuzzer supplies `main`, and links only with `--sanitize=fuzzer`. The
// bodies of the targets are the root package's `TokenCtlFuzzing` library, which the seed
// replay in TokenKitTests calls too.
let package = Package(
  name: "tokenctl-fuzz",
  dependencies: [.package(name: "tokenctl", path: "../..")],
  targets: [
    // One executable for every target, chosen by FUZZ_TARGET: one instrumented link of
    // TokenKit and BoringSSL instead of one per target, which on two cores is minutes.
    .executableTarget(
      name: "tokenctl-fuzz",
      dependencies: [.product(name: "TokenCtlFuzzing", package: "tokenctl")],
      swiftSettings: [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .treatAllWarnings(as: .error),
      ])
  ]
)
