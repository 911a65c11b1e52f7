import IAPCLI

await Entry.verifier()
