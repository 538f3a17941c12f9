import FuzzSupport

FuzzMain.run(.snapshot)
