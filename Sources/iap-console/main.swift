import IAPConsoleCLI

await ConsoleEntry.main()
