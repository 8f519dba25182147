import Testing

/// The suites that talk to the shared glewlwyd (Debian's 2.7.5 on SQLite), one test at a
/// time across them: glewlwyd opens its database without a busy timeout, so two writes at
/// once (a registration beside a refresh) make one fail with HTTP 500, "Error executing sql
/// query", as any glewlwyd on SQLite would under that load. Our tests ask one thing of it
/// at a time; what tokenctl does with a 500 is tested at the stub server.
@Suite(.serialized) enum GlewlwydSuites {}
