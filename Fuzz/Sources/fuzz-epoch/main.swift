import FuzzSupport

FuzzMain.run(.epoch)
