import FuzzSupport

FuzzMain.run(.http)
