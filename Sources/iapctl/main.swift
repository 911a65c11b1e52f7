import IAPCLI

await Entry.control()
