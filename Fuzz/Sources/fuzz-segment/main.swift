import FuzzSupport

FuzzMain.run(.segment)
