from gateway.commands.cli import main

main()
