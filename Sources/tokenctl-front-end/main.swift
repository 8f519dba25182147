// Only the entry point lives here; the front end is AgentFrontEnd's, where tests reach it.
// This module compiles that module's sources, and AgentWire's and SocketIO's, again as
// Embedded Swift (Package.swift), so there is nothing to import.
FrontEnd.run()
