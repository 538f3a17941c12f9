import FuzzSupport

FuzzMain.run(.multistatus)
