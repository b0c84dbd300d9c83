// QuireCore: sectioned lists, their immutable versions, validation, windows and the diff.
// Pure Swift: no HTTP, no SQL.
