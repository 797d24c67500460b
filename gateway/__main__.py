from gateway.commands.start import main

main()
