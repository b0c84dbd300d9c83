// QuireClient: a thin client's window model that applies Quire's change formats (Foundation only).
