import FuzzSupport

FuzzMain.run(.caldavRequest)
