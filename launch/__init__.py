"""Launch: one job description (train and score one environment at one commit), run by a backend (SkyPilot on a
GPU cloud, or a local subprocess), with job records that say where each job stands."""
