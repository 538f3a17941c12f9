import FuzzSupport

FuzzMain.run(.json)
