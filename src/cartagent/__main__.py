from cartagent.cli import main

main()
