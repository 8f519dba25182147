import AgentFrontEnd

// Only the entry point lives here; the front end is AgentFrontEnd's, where tests reach it.
FrontEnd.run()
