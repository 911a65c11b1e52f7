import IAPCLI

await Entry.appleSim()
